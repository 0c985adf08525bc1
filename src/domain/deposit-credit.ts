import { stablecoinMinorToBase } from './money.js';
import { SESSION_TRANSITIONS } from './session-state.js';
import { settlesAsPaid } from './settlement-rule.js';
import type { UnmatchedReason } from './unmatched-reasons.js';

// The credit decision for a batch of deposits turning final (decisions.md, "Deposits"): which deposit credits which
// session, which is confirmed as unmatched (and why), which session it pays, and which transfer is reported as a
// failed payment. Pure: the ledger (confirmFinalDeposits) reads and locks the rows, calls this, and writes what it says.
// Rules, in the order they are applied to each deposit (deposits in chain order: block, then log index):
// - a look-alike of the token (recorded as unsupported when seen): unmatched `unsupported_token`, whatever its session,
//   with no payment.failed (it is no payment in a supported token; the operator sees it);
// - no session: unmatched `no_session`;
// - another network or token than the session's selection: unmatched `not_selected`, and a payment.failed for the
//   transfer while the session is open and unpaid, the transfer non-zero and in a block at or before expires_at;
// - a block after expires_at: unmatched `late`;
// - the session already paid (before or by an earlier deposit of this batch): unmatched `session_paid`;
// - a canceled session: `session_canceled`;
// - else credited; the first credit whose running total settles the session (settlement-rule.ts) pays it.

export interface FinalDeposit {
  id: string;
  sessionId: string | null;
  token: string;
  amountBase: bigint;
  blockTime: Date;
  /** A look-alike contract's transfer (deposits.unmatched_reason = 'unsupported_token' since it was seen). */
  unsupported?: boolean;
}

export interface CreditableSession {
  id: string;
  merchantId: string;
  network: string | null;
  token: string | null;
  status: string;
  expiresAt: Date;
  targetAmountMinor: bigint;
  /** What the session had received before this batch (token base units). */
  receivedBase: bigint;
}

export interface CreditDecision {
  depositId: string;
  disposition: 'credited' | 'unmatched';
  reason: UnmatchedReason | null;
}

/** Where a session stands after the batch: only sessions this batch credited are listed. */
export interface SessionCredit {
  sessionId: string;
  received: bigint;
  /** The deposit whose credit settled the session as paid, or null while it stays unpaid. */
  paidBy: string | null;
}

export interface CreditBatch {
  decisions: CreditDecision[];
  credited: SessionCredit[];
  /** Transfers that can never complete their open session (payment.failed), in chain order. */
  failedTransfers: Array<{ sessionId: string; token: string; amountBase: bigint }>;
}

export interface CreditRules {
  network: string;
  tokenDecimals: (token: string) => number;
  /** The merchant's underpayment tolerance in basis points (0 when it has none). */
  toleranceBps: (merchantId: string) => number;
}

export function decideCredits(deposits: readonly FinalDeposit[], sessions: readonly CreditableSession[], rules: CreditRules): CreditBatch {
  const payable = new Set<string>(SESSION_TRANSITIONS.pay);
  const state = new Map(sessions.map((s) => [s.id, { row: s, received: s.receivedBase, paidBy: null as string | null, credited: false }]));
  const decisions: CreditDecision[] = [];
  const failedTransfers: CreditBatch['failedTransfers'] = [];
  for (const d of deposits) {
    const s = d.sessionId ? state.get(d.sessionId) : undefined;
    const unmatched = (reason: UnmatchedReason) => decisions.push({ depositId: d.id, disposition: 'unmatched', reason });
    if (d.unsupported) {
      unmatched('unsupported_token');
      continue;
    }
    if (!s) {
      unmatched('no_session');
      continue;
    }
    const row = s.row;
    const inTime = d.blockTime.getTime() <= row.expiresAt.getTime();
    if (row.network !== rules.network || row.token !== d.token) {
      unmatched('not_selected');
      // A zero-value transfer moves no money (address-poisoning spam): no event.
      if (row.status === 'open' && s.paidBy === null && d.amountBase > 0n && inTime)
        failedTransfers.push({ sessionId: row.id, token: d.token, amountBase: d.amountBase });
    } else if (!inTime) unmatched('late');
    else if (s.paidBy !== null || row.status === 'paid') unmatched('session_paid');
    // Payable: open, or expired for a block at or before expires_at (a later block is `late` above); so only canceled.
    else if (!payable.has(row.status)) unmatched('session_canceled');
    else {
      s.received += d.amountBase;
      s.credited = true;
      decisions.push({ depositId: d.id, disposition: 'credited', reason: null });
      const decimals = rules.tokenDecimals(d.token);
      const due = stablecoinMinorToBase(row.targetAmountMinor, decimals);
      if (settlesAsPaid(due, s.received, decimals, rules.toleranceBps(row.merchantId))) s.paidBy = d.id;
    }
  }
  const credited = [...state.values()]
    .filter((s) => s.credited)
    .map((s) => ({ sessionId: s.row.id, received: s.received, paidBy: s.paidBy }));
  return { decisions, credited, failedTransfers };
}
