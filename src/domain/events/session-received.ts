import { formatBaseUnits, stablecoinMinorToBase } from '../money.js';
import { unixSeconds } from './json-int.js';

// What a session received (issue 16 item 5; docs/checkout.md "What a session received"): extension fields of the
// PaymentSession in GET responses and of `payment.completed` / `payment.expired`. Amounts are decimal strings of the
// token (what the payer sent), with the exact base units beside them; `payments` lists every final transfer to the
// session's deposit address: `credited` ones make up amount_received, `unmatched` ones (late, another token or network,
// after the session was paid or closed) are the operator's to pay back (refund with deposit_id).

/** One final deposit to a session's address, as the ledger stores it. */
export interface ReceivedPayment {
  id: string;
  network: string;
  token: string;
  txHash: string;
  amountBase: bigint;
  from: string | null;
  confirmedAt: Date | null;
  disposition: 'credited' | 'unmatched';
  unmatchedReason: string | null;
}

export interface ReceivedSession {
  status: string;
  token: string | null;
  targetAmountMinor: bigint;
  receivedBase: bigint;
}

/**
 * The extension fields. `decimals` is the registry's for the session's token (undefined when this deployment does not
 * configure it: amounts then show base units only); `display` turns a stored address into the form shown to people.
 */
export function sessionReceivedFields(
  s: ReceivedSession,
  payments: readonly ReceivedPayment[],
  decimals: (network: string, token: string) => number | undefined,
  display: (network: string, canonical: string) => string = (_n, c) => c,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const own = s.token !== null ? payments.find((p) => p.token === s.token) : undefined;
  const d = s.token !== null && own ? decimals(own.network, s.token) : undefined;
  const fmt = (base: bigint, dec: number | undefined) => (dec === undefined ? null : formatBaseUnits(base, dec));
  out.amount_received = s.receivedBase === 0n ? '0.00' : fmt(s.receivedBase, d);
  out.amount_received_base = s.receivedBase.toString();
  out.received_currency = s.receivedBase === 0n ? null : s.token;
  if (d !== undefined && s.token !== null) {
    const due = stablecoinMinorToBase(s.targetAmountMinor, d);
    if (s.receivedBase > due) {
      out.overpaid_amount = formatBaseUnits(s.receivedBase - due, d);
      out.overpaid_amount_base = (s.receivedBase - due).toString();
    } else if (s.status !== 'paid' && s.receivedBase < due) {
      out.remaining_amount = formatBaseUnits(due - s.receivedBase, d);
      out.remaining_amount_base = (due - s.receivedBase).toString();
    }
  }
  out.payments = payments.map((p) => {
    const pd = decimals(p.network, p.token);
    return {
      id: p.id,
      network: p.network,
      token: p.token,
      transaction_hash: p.txHash,
      amount: fmt(p.amountBase, pd),
      amount_base: p.amountBase.toString(),
      sender: p.from === null ? null : display(p.network, p.from),
      confirmed_at: p.confirmedAt ? unixSeconds(p.confirmedAt) : null,
      status: p.disposition,
      ...(p.unmatchedReason !== null ? { unmatched_reason: p.unmatchedReason } : {}),
    };
  });
  return out;
}
