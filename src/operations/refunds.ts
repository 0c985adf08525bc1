import { randomBytes } from 'node:crypto';
import type { NetworkId, TokenSymbol } from '../../chains/vocabulary.js';
import type { RefundStatus } from '../db/schema.js';
import { invalidRequest, parameterInvalid, resourceNotFound } from '../domain/errors.js';
import { requestFingerprint } from '../ledger/core/idempotency.js';
import type { SessionRow } from '../ledger/payments/sessions.js';
import { feesByTx } from '../ledger/journal/fees-by-tx.js';
import { payoutAttempts } from '../ledger/refunds/refund-payouts.js';
import { refundable } from '../ledger/refunds/refund-sources.js';
import { createRefund, type CreateRefundResult, type RefundRow } from '../ledger/refunds/refunds.js';
import type { OperationsContext } from './context.js';
import { decodeCursor, pageOf } from './payments-cursor.js';
import { payoutAttemptView, refundView, type PayoutAttemptView, type RefundView } from './refunds-view.js';

// Refunds for the console: a refund of a payment session with the public API's rules and errors (the ledger's
// createRefund decides everything the API's POST /refunds/create decides: source, currency, window, destination,
// daily limit, amount left), the refunds list and one refund with its on-chain attempts.

export interface SessionRefundInput {
  /** Minor units of the token (2 decimals); default: all that is left to refund. */
  amountMinor?: bigint;
  reason?: string;
  description?: string;
  /** The refund's own id (its idempotency key); default a fresh `console-…` id. */
  refundId?: string;
  /** Who asked (metadata.initiated_by). */
  initiatedBy: string;
}

export async function refundPayment(
  ops: Pick<OperationsContext, 'db' | 'chains' | 'enqueuePayout'>,
  s: SessionRow,
  input: SessionRefundInput,
): Promise<CreateRefundResult> {
  let amountMinor = input.amountMinor;
  if (amountMinor === undefined) {
    // What is left (read only; the create re-checks under locks). Throws the spec's errors for an open session.
    const left = await refundable(ops.db, ops.chains.tokenDecimals, { sessionId: s.id, depositId: null });
    if (!left || left.remainingMinor === null) {
      throw invalidRequest(
        'INVALID_SESSION_STATUS',
        `Refunds on ${s.network ?? 'this network'} are not available on this deployment.`,
        'session_id',
      );
    }
    if (left.remainingMinor <= 0n) throw invalidRequest('REFUND_AMOUNT_EXCEEDED', 'Nothing is left to refund on this session.', 'amount');
    amountMinor = left.remainingMinor;
  }
  const refundId = input.refundId ?? `console-${randomBytes(9).toString('base64url')}`;
  const currency = (s.token ?? 'USDT') as TokenSymbol;
  const result = await createRefund(ops.db, ops.chains, {
    merchantId: s.merchant_id,
    mode: s.mode,
    refundId,
    sessionId: s.id,
    depositId: null,
    amountMinor,
    currency,
    reason: input.reason ?? null,
    description: input.description ?? null,
    metadata: { initiated_by: input.initiatedBy },
    destinationAddress: null,
    fingerprint: requestFingerprint({
      session_id: s.id,
      refund_id: refundId,
      amount: amountMinor.toString(),
      currency,
      reason: input.reason ?? null,
      description: input.description ?? null,
    }),
  });
  if (result.kind === 'created') await ops.enqueuePayout(result.refund.id);
  return result;
}

export interface RefundFilter {
  merchantId?: string;
  status?: RefundStatus;
  network?: NetworkId;
  createdFrom?: Date;
  createdTo?: Date;
  order: 'asc' | 'desc';
  limit: number;
  cursor?: string;
}

/** Refunds newest first (or oldest), keyset on (created_at, id): refunds_created_idx, refunds_merchant_created_idx. */
export async function listConsoleRefunds(
  ops: Pick<OperationsContext, 'db' | 'chains'>,
  f: RefundFilter,
): Promise<{ data: RefundView[]; next_cursor: string | null }> {
  let q = ops.db.selectFrom('refunds').selectAll();
  if (f.merchantId !== undefined) q = q.where('merchant_id', '=', f.merchantId);
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  if (f.network !== undefined) q = q.where('network', '=', f.network);
  if (f.createdFrom !== undefined) q = q.where('created_at', '>=', f.createdFrom);
  if (f.createdTo !== undefined) q = q.where('created_at', '<', f.createdTo);
  if (f.cursor !== undefined) {
    const id = decodeCursor(f.cursor);
    const at = await ops.db.selectFrom('refunds').select(['created_at', 'id']).where('id', '=', id).executeTakeFirst();
    if (!at) throw parameterInvalid('cursor', 'cursor is not a cursor of this list.');
    const cmp = f.order === 'desc' ? '<' : '>';
    q = q.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), cmp, eb.tuple(eb.selectFrom('refunds').select('created_at').where('id', '=', id), id)),
    );
  }
  const rows = await q
    .orderBy('created_at', f.order)
    .orderBy('id', f.order)
    .limit(f.limit + 1)
    .execute();
  const page = pageOf(rows, f.limit);
  return { data: page.rows.map((r) => refundView(r, ops.chains)), next_cursor: page.nextCursor };
}

/** A refund by our re_ id (any merchant: the console checks who may see it). */
export async function findRefund(ops: Pick<OperationsContext, 'db'>, id: string): Promise<RefundRow> {
  const r = await ops.db.selectFrom('refunds').selectAll().where('id', '=', id).executeTakeFirst();
  if (!r) throw resourceNotFound('id', 'refund');
  return r;
}

export async function refundDetail(
  ops: Pick<OperationsContext, 'db' | 'chains'>,
  r: RefundRow,
): Promise<{ refund: RefundView; attempts: PayoutAttemptView[] }> {
  const attempts = await payoutAttempts(ops.db, r.id);
  const fees = await feesByTx(
    ops.db,
    { network: r.network, mode: r.mode },
    attempts.map((a) => a.tx_hash),
  );
  return { refund: refundView(r, ops.chains), attempts: attempts.map((a) => payoutAttemptView(a, ops.chains, fees.get(a.tx_hash))) };
}
