import { sql } from 'kysely';
import { STABLECOIN_EXPONENT, type Mode } from '../../chains/vocabulary.js';
import { parameterInvalid } from '../domain/errors.js';
import { formatBaseUnits, formatMinor, scaleDown } from '../domain/money.js';
import { LIVE_REFUND_STATUSES } from '../domain/refund-state.js';
import { UNSUPPORTED_TOKEN_NOTICE } from '../domain/unmatched-reasons.js';
import type { OperationsContext } from './context.js';
import { decodeCursor, pageOf } from './payments-cursor.js';
import type { StrandedKind } from './stranded-refund.js';

// Stranded money (console GET /stranded; the CLI's `deposits unmatched`): confirmed deposits that paid nothing
// (disposition unmatched: late, to a closed or paid session, another token or network, a look-alike token: listed with
// its own amount, nothing refundable, and UNSUPPORTED_TOKEN_NOTICE), and what sessions that
// closed unpaid (expired or canceled) received, each with its refunds and what is left to pay back. Newest first,
// keyset on (time, id): deposits_unmatched_idx and payment_sessions_stranded_idx.

export interface StrandedView {
  kind: StrandedKind;
  id: string;
  merchant_id: string | null;
  mode: Mode;
  network: string;
  token: string;
  received: string | null;
  refundable: string | null;
  sender: string | null;
  reason: string;
  /** What the operator must know of the row (an unsupported token: not credited, not refundable); null otherwise. */
  notice: string | null;
  tx_hash: string | null;
  session_id: string | null;
  at: string;
  refunds: { id: string; refund_id: string; status: string; amount: string }[];
}

export interface StrandedFilter {
  kind: StrandedKind;
  merchantId?: string;
  network?: string;
  mode?: Mode;
  limit: number;
  cursor?: string;
}

export async function listStranded(
  ops: Pick<OperationsContext, 'db' | 'chains'>,
  f: StrandedFilter,
): Promise<{ data: StrandedView[]; next_cursor: string | null }> {
  return f.kind === 'deposit' ? strandedDeposits(ops, f) : strandedSessions(ops, f);
}

async function strandedDeposits(ops: Pick<OperationsContext, 'db' | 'chains'>, f: StrandedFilter) {
  let q = ops.db
    .selectFrom('deposits as d')
    .leftJoin('payment_sessions as s', 's.id', 'd.session_id')
    .selectAll('d')
    .select('s.merchant_id')
    .where('d.disposition', '=', 'unmatched');
  if (f.merchantId !== undefined) q = q.where('s.merchant_id', '=', f.merchantId);
  if (f.network !== undefined) q = q.where('d.network', '=', f.network);
  if (f.mode !== undefined) q = q.where('d.mode', '=', f.mode);
  if (f.cursor !== undefined) {
    const id = decodeCursor(f.cursor);
    const at = await ops.db
      .selectFrom('deposits')
      .select('id')
      .where('id', '=', id)
      .where('disposition', '=', 'unmatched')
      .executeTakeFirst();
    if (!at) throw parameterInvalid('cursor', 'cursor is not a cursor of this list.');
    q = q.where(sql<boolean>`(d.confirmed_at, d.id) < (select confirmed_at, id from deposits where id = ${id})`);
  }
  const rows = await q
    .orderBy('d.confirmed_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(f.limit + 1)
    .execute();
  const page = pageOf(rows, f.limit);
  const refunds = page.rows.length
    ? await ops.db
        .selectFrom('refunds')
        .select(['id', 'refund_id', 'status', 'amount_minor', 'deposit_id'])
        .where(
          'deposit_id',
          'in',
          page.rows.map((r) => r.id),
        )
        .orderBy('created_at')
        .execute()
    : [];
  const data = page.rows.map((d): StrandedView => {
    const unsupported = d.unmatched_reason === 'unsupported_token';
    const lookalike = unsupported ? ops.chains.lookalike(d.network, d.mode, d.token_contract) : undefined;
    const decimals = unsupported ? lookalike?.decimals : ops.chains.tokenDecimals(d.network, d.mode, d.token);
    const mine = refunds.filter((r) => r.deposit_id === d.id);
    return {
      kind: 'deposit',
      id: d.id,
      merchant_id: d.merchant_id ?? null,
      mode: d.mode,
      network: d.network,
      token: d.token,
      received: decimals === undefined ? null : formatBaseUnits(d.amount_base, decimals),
      // Never a payable amount in USDT/USDC minor units: the gateway does not pay look-alikes back.
      refundable: unsupported ? null : left(d.amount_base, decimals, mine),
      sender: d.from_address === null ? null : ops.chains.displayAddress(d.network, d.mode, d.from_address),
      reason: d.unmatched_reason ?? 'unmatched',
      notice: unsupported ? `${UNSUPPORTED_TOKEN_NOTICE}${lookalike ? ` (${lookalike.note})` : ''}` : null,
      tx_hash: d.tx_hash,
      session_id: d.session_id,
      at: (d.confirmed_at ?? d.block_time).toISOString(),
      refunds: mine.map(refundBrief),
    };
  });
  return { data, next_cursor: page.nextCursor };
}

async function strandedSessions(ops: Pick<OperationsContext, 'db' | 'chains'>, f: StrandedFilter) {
  let q = ops.db.selectFrom('payment_sessions').selectAll().where('status', 'in', ['expired', 'canceled']).where('received_base', '>', 0n);
  if (f.merchantId !== undefined) q = q.where('merchant_id', '=', f.merchantId);
  if (f.network !== undefined) q = q.where('network', '=', f.network as never);
  if (f.mode !== undefined) q = q.where('mode', '=', f.mode);
  if (f.cursor !== undefined) {
    const id = decodeCursor(f.cursor);
    const at = await ops.db.selectFrom('payment_sessions').select('id').where('id', '=', id).executeTakeFirst();
    if (!at) throw parameterInvalid('cursor', 'cursor is not a cursor of this list.');
    q = q.where(sql<boolean>`(created_at, id) < (select created_at, id from payment_sessions where id = ${id})`);
  }
  const rows = await q
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(f.limit + 1)
    .execute();
  const page = pageOf(rows, f.limit);
  const ids = page.rows.map((s) => s.id);
  const [refunds, senders] = ids.length
    ? await Promise.all([
        ops.db
          .selectFrom('refunds')
          .select(['id', 'refund_id', 'status', 'amount_minor', 'session_id'])
          .where('session_id', 'in', ids)
          .where('deposit_id', 'is', null)
          .orderBy('created_at')
          .execute(),
        ops.db
          .selectFrom('deposits')
          .select(['session_id', 'from_address', 'tx_hash'])
          .where('session_id', 'in', ids)
          .where('disposition', '=', 'credited')
          .execute(),
      ])
    : [[], []];
  const data = page.rows.map((s): StrandedView => {
    const network = s.network ?? '';
    const token = s.token ?? '';
    const decimals = s.network && s.token ? ops.chains.tokenDecimals(network, s.mode, token) : undefined;
    const mine = refunds.filter((r) => r.session_id === s.id);
    const credited = senders.filter((d) => d.session_id === s.id);
    const from = [...new Set(credited.map((d) => d.from_address))];
    return {
      kind: 'session',
      id: s.id,
      merchant_id: s.merchant_id,
      mode: s.mode,
      network,
      token,
      received: decimals === undefined ? null : formatBaseUnits(s.received_base, decimals),
      refundable: left(s.received_base, decimals, mine),
      sender: from.length === 1 && from[0] ? ops.chains.displayAddress(network, s.mode, from[0]) : null,
      reason: s.status,
      notice: null,
      tx_hash: credited.length === 1 ? credited[0]!.tx_hash : null,
      session_id: s.id,
      at: (s.expired_at ?? s.canceled_at ?? s.expires_at).toISOString(),
      refunds: mine.map(refundBrief),
    };
  });
  return { data, next_cursor: page.nextCursor };
}

type RefundBriefRow = { id: string; refund_id: string; status: string; amount_minor: bigint };
const refundBrief = (r: RefundBriefRow) => ({
  id: r.id,
  refund_id: r.refund_id,
  status: r.status,
  amount: formatMinor(r.amount_minor, STABLECOIN_EXPONENT),
});

/** What arrived, floored to cents, less live refunds (as the ledger's `refundable`); null when decimals are unknown. */
function left(receivedBase: bigint, decimals: number | undefined, refunds: RefundBriefRow[]): string | null {
  if (decimals === undefined) return null;
  const live = refunds
    .filter((r) => (LIVE_REFUND_STATUSES as readonly string[]).includes(r.status))
    .reduce((sum, r) => sum + r.amount_minor, 0n);
  const rest = scaleDown(receivedBase, decimals, STABLECOIN_EXPONENT, 'down') - live;
  return formatMinor(rest > 0n ? rest : 0n, STABLECOIN_EXPONENT);
}
