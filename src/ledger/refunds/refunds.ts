import { sql, type Selectable, type Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database, Mode, RefundsTable } from '../../db/schema.js';
import { ApiError, invalidRequest } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import { scaleDown, stablecoinMinorToBase } from '../../domain/money.js';
import type { TokenDecimals } from '../../domain/chain-lookup.js';
import { STABLECOIN_EXPONENT, type NetworkId, type TokenSymbol } from '../../../chains/vocabulary.js';
import { newestFirstPage } from '../core/newest-first-page.js';
import { LIVE_REFUND_STATUSES, REFUND_TRANSITIONS } from '../../domain/refund-state.js';
import { lockRefundSession, refundedAgainst, resolveRefundSource } from './refund-sources.js';

export type RefundRow = Selectable<RefundsTable>;

export interface RefundChains {
  /** Canonical form of an address on a network, or null when it is not one (checksums checked). */
  normalizeAddress(network: string, mode: Mode, text: string): string | null;
  /** Token decimals from the registry of that network and mode; undefined when the network is not configured. */
  tokenDecimals: TokenDecimals;
}

export interface CreateRefundInput {
  merchantId: string;
  mode: Mode;
  refundId: string;
  /** The session refunded (paid, or closed unpaid with money received); with depositId, optional (the deposit's). */
  sessionId: string | null;
  /** Extension: the unmatched deposit paid back (docs/refunds.md, "Money back to customers"). */
  depositId?: string | null;
  amountMinor: bigint;
  currency: TokenSymbol;
  reason: string | null;
  description: string | null;
  metadata: Record<string, string>;
  destinationAddress: string | null;
  fingerprint: string;
}

export type CreateRefundResult = { kind: 'created' | 'replayed'; refund: RefundRow };

const err = (status: number, type: ApiError['type'], code: string, message: string, param?: string) =>
  new ApiError(status, type, code, message, param);

/**
 * Creates a refund after every rule of decisions.md, in one transaction that locks the session row (so concurrent
 * refunds of one session, or of its deposits, see each other's amounts), the deposit row when one is refunded, and the
 * merchant row (so the daily limit holds under concurrency). The same refund_id with the same request replays the
 * stored refund; with another request it is a 409.
 */
export async function createRefund(db: Db, chains: RefundChains, input: CreateRefundInput): Promise<CreateRefundResult> {
  const depositId = input.depositId ?? null;
  return db.transaction().execute(async (trx) => {
    const session = await lockRefundSession(trx, { sessionId: input.sessionId, depositId });

    const existing = await findByMerchantRefundId(trx, input.merchantId, input.mode, input.refundId);
    if (existing) {
      if (
        existing.request_fingerprint !== input.fingerprint ||
        (input.sessionId !== null && existing.session_id !== input.sessionId) ||
        existing.deposit_id !== depositId
      ) {
        throw err(
          409,
          'idempotency_error',
          'idempotency_key_reused',
          'This refund_id was already used with a different request.',
          'refund_id',
        );
      }
      return { kind: 'replayed', refund: existing };
    }

    if (!session) {
      if (depositId !== null) throw err(404, 'invalid_request_error', 'DEPOSIT_NOT_FOUND', 'No such deposit.', 'deposit_id');
      throw err(404, 'invalid_request_error', 'SESSION_NOT_FOUND', 'No such payment session.', 'session_id');
    }
    if (session.merchant_id !== input.merchantId || session.mode !== input.mode) {
      if (depositId !== null) {
        throw err(403, 'permission_error', 'deposit_access_denied', 'This deposit is not accessible with this API key.', 'deposit_id');
      }
      throw err(
        403,
        'permission_error',
        'session_access_denied',
        'This payment session is not accessible with this API key.',
        'session_id',
      );
    }
    if (depositId !== null && input.sessionId !== null && input.sessionId !== session.id) {
      throw invalidRequest('parameter_invalid', 'This deposit was not made to that session.', 'deposit_id');
    }
    const source = await resolveRefundSource(trx, session, depositId);

    if (input.currency !== source.token) {
      const what = source.kind === 'unmatched_deposit' ? 'This deposit was made' : 'This session was paid';
      throw invalidRequest('INVALID_CURRENCY', `${what} in ${source.token}; refund it in ${source.token}.`, 'currency');
    }
    const decimals = chains.tokenDecimals(source.network, input.mode, source.token);
    if (decimals === undefined) {
      throw invalidRequest(
        'INVALID_SESSION_STATUS',
        `Refunds on ${source.network} are not available on this deployment.`,
        depositId !== null ? 'deposit_id' : 'session_id',
      );
    }

    // Under the session's (and deposit's) lock, before the merchant's: every create of the merchant waits for the
    // merchant row until this transaction commits, so as little as possible happens after it is locked.
    const refunded = await refundedAgainst(trx, source);

    const merchant = await trx.selectFrom('merchants').selectAll().where('id', '=', input.merchantId).forUpdate().executeTakeFirstOrThrow();
    const windowEnds = source.since.getTime() + merchant.refund_window_days * 86_400_000;
    if (Date.now() > windowEnds) {
      throw invalidRequest('REFUND_TIME_EXPIRED', `Refunds are possible for ${merchant.refund_window_days} days after payment.`);
    }

    let destination = source.sender;
    if (input.destinationAddress !== null) {
      destination = chains.normalizeAddress(source.network, input.mode, input.destinationAddress);
      if (destination === null) {
        throw invalidRequest('parameter_invalid', `destination_address is not a valid ${source.network} address.`, 'destination_address');
      }
    }
    if (!destination) {
      const why = source.kind === 'unpaid_session' ? 'The transfers came from several senders' : 'The payer is unknown';
      throw invalidRequest('parameter_missing', `${why}; give destination_address.`, 'destination_address');
    }

    // Daily limit per merchant and mode, by count and by amount, per UTC day (failed and canceled refunds do not count).
    // A statement of its own AFTER the merchant row is locked: its snapshot then sees every refund committed by the
    // creates that held the lock before (a count inside the locking statement would not).
    const today = await trx
      .selectFrom('refunds')
      .select((eb) => [eb.fn.countAll<bigint>().as('n'), eb.fn.coalesce(eb.fn.sum<bigint>('amount_minor'), sql<bigint>`0`).as('total')])
      .where('merchant_id', '=', input.merchantId)
      .where('mode', '=', input.mode)
      .where('status', 'in', LIVE_REFUND_STATUSES)
      .where('created_at', '>=', sql<Date>`date_trunc('day', now() at time zone 'utc') at time zone 'utc'`)
      .executeTakeFirstOrThrow();
    if (
      BigInt(today.n) + 1n > BigInt(merchant.daily_refund_count_limit) ||
      BigInt(today.total) + input.amountMinor > merchant.daily_refund_amount_limit_minor
    ) {
      throw err(429, 'rate_limit_error', 'DAILY_REFUND_LIMIT_EXCEEDED', 'The daily refund limit of this merchant is reached.');
    }

    // What arrived, in the API's 2-decimal units (an overpayment may be refunded too; sub-cent dust may not).
    const paidMinor = scaleDown(source.receivedBase, decimals, STABLECOIN_EXPONENT, 'down');
    if (refunded + input.amountMinor > paidMinor) {
      const what = source.kind === 'unmatched_deposit' ? 'this deposit' : 'this session';
      throw invalidRequest(
        'REFUND_AMOUNT_EXCEEDED',
        `Refunds of ${what} may total at most ${paidMinor} (${refunded} already refunded or in progress).`,
        'amount',
      );
    }

    const refund = await trx
      .insertInto('refunds')
      .values({
        id: newId('re'),
        merchant_id: input.merchantId,
        mode: input.mode,
        refund_id: input.refundId,
        session_id: session.id,
        deposit_id: depositId,
        order_id: session.order_id,
        amount_minor: input.amountMinor,
        currency: input.currency,
        reason: input.reason,
        description: input.description,
        metadata: JSON.stringify(input.metadata),
        // Deposits' and settlements' network columns are typed as text (src/db/deposit-tables.ts); the value is a NetworkId.
        network: source.network as NetworkId,
        token: input.currency,
        destination_address: destination,
        amount_base: stablecoinMinorToBase(input.amountMinor, decimals),
        request_fingerprint: input.fingerprint,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { kind: 'created', refund };
  });
}

async function findByMerchantRefundId(trx: Transaction<Database> | Db, merchantId: string, mode: Mode, refundId: string) {
  return trx
    .selectFrom('refunds')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('mode', '=', mode)
    .where('refund_id', '=', refundId)
    .executeTakeFirst();
}

export type RefundLookup = { kind: 'found'; refund: RefundRow } | { kind: 'forbidden' } | { kind: 'not_found' };

/**
 * A refund by the merchant's refund_id (or our re_ id). One that exists only under another merchant or mode is
 * `forbidden` (spec: 403 FORBIDDEN).
 */
export async function lookupRefund(db: Db, merchantId: string, mode: Mode, refundId: string): Promise<RefundLookup> {
  const own =
    (await findByMerchantRefundId(db, merchantId, mode, refundId)) ??
    (await db
      .selectFrom('refunds')
      .selectAll()
      .where('id', '=', refundId)
      .where('merchant_id', '=', merchantId)
      .where('mode', '=', mode)
      .executeTakeFirst());
  if (own) return { kind: 'found', refund: own };
  const elsewhere = await db
    .selectFrom('refunds')
    .select('id')
    .where((eb) => eb.or([eb('refund_id', '=', refundId), eb('id', '=', refundId)]))
    .limit(1)
    .executeTakeFirst();
  return elsewhere ? { kind: 'forbidden' } : { kind: 'not_found' };
}

export type CancelRefundResult = { kind: 'canceled'; refund: RefundRow } | { kind: 'not_cancelable'; refund: RefundRow };

/**
 * Cancels a pending refund, or a processing one whose payout has not been signed yet. `signed_at` is set in the
 * same row by the transaction that stores the signed payout, so this single-row check cannot race it. With
 * `onCanceled` (the API storing its answer under the request's Idempotency-Key), the update and it share a transaction.
 */
export async function cancelRefund(
  db: Db,
  refund: RefundRow,
  onCanceled?: (trx: Transaction<Database>, refund: RefundRow) => Promise<void>,
): Promise<CancelRefundResult> {
  if (onCanceled)
    return db.transaction().execute(async (trx) => {
      const r = await cancelRefundIn(trx, refund);
      if (r.kind === 'canceled') await onCanceled(trx, r.refund);
      return r;
    });
  return cancelRefundIn(db, refund);
}

async function cancelRefundIn(db: Db, refund: RefundRow): Promise<CancelRefundResult> {
  const canceled = await db
    .updateTable('refunds')
    .set({ status: 'canceled', canceled_at: sql`now()` })
    .where('id', '=', refund.id)
    .where('status', 'in', REFUND_TRANSITIONS.cancel)
    .where('signed_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (canceled) return { kind: 'canceled', refund: canceled };
  const current = await db.selectFrom('refunds').selectAll().where('id', '=', refund.id).executeTakeFirstOrThrow();
  return { kind: 'not_cancelable', refund: current };
}

/**
 * One page, newest first; `position` counts the matching rows before it. With `after` (a refund's service-side id of
 * this merchant and mode), the rows strictly after that one in (created_at, id) order; null when there is no such refund.
 */
export async function listRefunds(
  db: Db,
  merchantId: string,
  mode: Mode,
  opts: { offset: number; limit: number; status?: string; sessionId?: string; after?: string },
) {
  let base = db.selectFrom('refunds').where('merchant_id', '=', merchantId).where('mode', '=', mode);
  if (opts.status) base = base.where('status', '=', opts.status as RefundRow['status']);
  if (opts.sessionId) base = base.where('session_id', '=', opts.sessionId);
  return newestFirstPage(db, 'refunds', base.selectAll(), { merchantId, mode }, opts);
}

/** A refund by its internal id (re_...), whatever its merchant; undefined when there is none. */
export async function refundById(db: Db, id: string): Promise<RefundRow | undefined> {
  return db.selectFrom('refunds').selectAll().where('id', '=', id).executeTakeFirst();
}
