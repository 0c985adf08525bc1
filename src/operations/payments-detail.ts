import { chainKey } from '../ledger/core/chain-ref.js';
import { STABLECOIN_EXPONENT } from '../../chains/vocabulary.js';
import { currencyExponent } from '../domain/currency.js';
import { formatBaseUnits, formatMinor } from '../domain/money.js';
import type { SessionRow } from '../ledger/payments/sessions.js';
import type { RefundRow } from '../ledger/refunds/refunds.js';
import type { OperationsContext } from './context.js';
import { iso } from './payments-view.js';
import { refundView, type RefundView } from './refunds-view.js';

// What the console's payment page shows besides the session object: its timeline, its deposits (with confirmations
// and explorer links), the webhook deliveries of it and of its refunds, and its refunds. Read only.

export type TimelineKind =
  | 'created'
  | 'quoted'
  | 'network_selected'
  | 'deposit_seen'
  | 'deposit_confirmed'
  | 'paid'
  | 'expired'
  | 'canceled'
  | 'refund_created'
  | 'refund_succeeded'
  | 'refund_failed';

export interface TimelineEntry {
  at: string;
  kind: TimelineKind;
  detail: string;
}

export interface DepositView {
  id: string;
  network: string;
  token: string;
  tx_hash: string;
  from_address: string | null;
  amount: string | null;
  amount_base: string;
  status: 'provisional' | 'confirmed' | 'orphaned';
  confirmations: number | null;
  explorer_url: string | null;
  block_number: string;
  at: string;
  /** A look-alike of the token (unmatched `unsupported_token`): never credited; the registry's note says what it is. */
  unsupported: { note: string } | null;
}

export interface DeliveryView {
  event_id: string;
  type: string;
  status: 'pending' | 'delivered' | 'failed' | 'skipped';
  attempts: number;
  last_response_code: number | null;
  last_attempt_at: string | null;
}

export interface PaymentDetailParts {
  timeline: TimelineEntry[];
  deposits: DepositView[];
  webhook_deliveries: DeliveryView[];
  refunds: RefundView[];
}

export async function paymentDetail(ops: Pick<OperationsContext, 'db' | 'chains'>, s: SessionRow): Promise<PaymentDetailParts> {
  const { db, chains } = ops;
  const [deposits, refunds, addresses] = await Promise.all([
    db.selectFrom('deposits').selectAll().where('session_id', '=', s.id).orderBy('observed_at').orderBy('id').execute(),
    db.selectFrom('refunds').selectAll().where('session_id', '=', s.id).orderBy('created_at').orderBy('id').execute(),
    db.selectFrom('deposit_addresses').selectAll().where('session_id', '=', s.id).orderBy('created_at').execute(),
  ]);
  const chainKeys = [...new Set(deposits.map((d) => chainKey(d)))];
  const tips = chainKeys.length
    ? await db.selectFrom('chain_cursors').select(['chain_key', 'tip_height']).where('chain_key', 'in', chainKeys).execute()
    : [];
  const tipOf = new Map(tips.map((t) => [t.chain_key, t.tip_height]));
  const depositViews: DepositView[] = deposits.map((d) => {
    const lookalike = d.unmatched_reason === 'unsupported_token' ? chains.lookalike(d.network, d.mode, d.token_contract) : undefined;
    // A look-alike's amount in its own decimals (never the token's: a look-alike may share its symbol on chain).
    const decimals = d.unmatched_reason === 'unsupported_token' ? lookalike?.decimals : chains.tokenDecimals(d.network, d.mode, d.token);
    const tip = tipOf.get(chainKey(d));
    return {
      id: d.id,
      network: d.network,
      token: d.token,
      tx_hash: d.tx_hash,
      from_address: d.from_address === null ? null : chains.displayAddress(d.network, d.mode, d.from_address),
      amount: decimals === undefined ? null : formatBaseUnits(d.amount_base, decimals),
      amount_base: d.amount_base.toString(),
      status: d.status,
      confirmations: tip === undefined || d.status === 'orphaned' ? null : Math.max(0, Number(tip - d.block_number) + 1),
      explorer_url: chains.explorerTxUrl(d.network, d.mode, d.tx_hash),
      block_number: d.block_number.toString(),
      at: d.observed_at.toISOString(),
      unsupported:
        d.unmatched_reason === 'unsupported_token'
          ? { note: lookalike?.note ?? `${d.token} at ${d.token_contract}: a look-alike of the token, not configured here any more` }
          : null,
    };
  });
  return {
    timeline: timelineOf(s, deposits, refunds, addresses),
    deposits: depositViews,
    webhook_deliveries: await deliveriesOf(ops, [s.id, ...refunds.map((r) => r.id)]),
    refunds: refunds.map((r) => refundView(r, chains)),
  };
}

type DepositRow = {
  id: string;
  network: string;
  token: string;
  tx_hash: string;
  amount_base: bigint;
  observed_at: Date;
  confirmed_at: Date | null;
  disposition: string | null;
  unmatched_reason: string | null;
};

function timelineOf(
  s: SessionRow,
  deposits: DepositRow[],
  refunds: RefundRow[],
  addresses: { network: string; address: string; created_at: Date }[],
): TimelineEntry[] {
  const out: { at: Date; kind: TimelineKind; detail: string }[] = [];
  const amount = `${formatMinor(s.amount_minor, currencyExponent(s.currency) ?? 2)} ${s.currency.toUpperCase()}`;
  out.push({ at: s.created_at, kind: 'created', detail: `${amount}, order ${s.order_id}` });
  if (s.exchange_rate !== null) {
    out.push({
      at: s.rate_locked_at ?? s.created_at,
      kind: 'quoted',
      detail: `${formatMinor(s.target_amount_minor, currencyExponent(s.target_currency) ?? STABLECOIN_EXPONENT)} ${s.target_currency} at ${s.exchange_rate}`,
    });
  }
  for (const a of addresses) out.push({ at: a.created_at, kind: 'network_selected', detail: `${a.network}, pay to ${a.address}` });
  if (addresses.length === 0 && s.network && s.deposit_address)
    out.push({ at: s.created_at, kind: 'network_selected', detail: `${s.network}, pay to ${s.deposit_address}` });
  for (const d of deposits) {
    const alike = d.unmatched_reason === 'unsupported_token' ? ' (unsupported token, never credited)' : '';
    const what = `${d.amount_base} base units of ${d.token}${alike} on ${d.network} (${d.tx_hash})`;
    out.push({ at: d.observed_at, kind: 'deposit_seen', detail: what });
    if (d.confirmed_at) out.push({ at: d.confirmed_at, kind: 'deposit_confirmed', detail: `${what}: ${d.disposition ?? 'final'}` });
  }
  if (s.paid_at) out.push({ at: s.paid_at, kind: 'paid', detail: `paid on ${s.network ?? '?'} in ${s.token ?? '?'}` });
  if (s.expired_at) out.push({ at: s.expired_at, kind: 'expired', detail: 'expired' });
  if (s.canceled_at) out.push({ at: s.canceled_at, kind: 'canceled', detail: 'canceled' });
  for (const r of refunds) {
    const what = `refund ${r.refund_id}: ${formatMinor(r.amount_minor, 2)} ${r.token}`;
    out.push({ at: r.created_at, kind: 'refund_created', detail: what });
    if (r.status === 'completed' && r.processed_at)
      out.push({ at: r.processed_at, kind: 'refund_succeeded', detail: `${what} (${r.transaction_hash ?? 'no hash'})` });
    if (r.status === 'failed' && r.processed_at)
      out.push({ at: r.processed_at, kind: 'refund_failed', detail: `${what}: ${r.failure_reason ?? 'failed'}` });
  }
  out.sort((a, b) => a.at.getTime() - b.at.getTime());
  return out.map((e) => ({ at: e.at.toISOString(), kind: e.kind, detail: e.detail }));
}

/** The webhook deliveries of the events of these aggregates (a session and its refunds), newest first. */
async function deliveriesOf(ops: Pick<OperationsContext, 'db'>, aggregateIds: string[]): Promise<DeliveryView[]> {
  const rows = await ops.db
    .selectFrom('outbox_events as e')
    .innerJoin('webhook_deliveries as d', 'd.event_id', 'e.id')
    .select(['d.event_id', 'd.event_type', 'd.status', 'd.attempts', 'd.last_status_code', 'd.updated_at', 'e.created_at'])
    .where('e.aggregate_id', 'in', aggregateIds)
    .orderBy('e.created_at', 'desc')
    .limit(200)
    .execute();
  return rows.map((d) => ({
    event_id: d.event_id,
    type: d.event_type,
    status: d.status,
    attempts: d.attempts,
    last_response_code: d.last_status_code,
    last_attempt_at: d.attempts > 0 ? iso(d.updated_at) : null,
  }));
}
