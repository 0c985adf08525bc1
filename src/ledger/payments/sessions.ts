import { sql, type Kysely, type Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database, LineItemRecord, Mode } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/errors.js';
import { nameStatement } from '../../db/named-statements.js';
import { SESSION_TRANSITIONS } from '../../domain/session-state.js';
import { formatBaseUnits } from '../../domain/money.js';
import type { TokenDecimals } from '../../domain/chain-lookup.js';
import type { NetworkId, TokenSymbol } from '../../../chains/vocabulary.js';
import { hasProvisionalDepositsBefore } from './deposits.js';
import { newestFirstPage, type NewestFirstPage } from '../core/newest-first-page.js';
import { insertOutboxEvent } from '../core/outbox.js';
import { PAYMENT_EVENT_TYPE, paymentEventObject } from '../../domain/events/payment.js';
import { SESSION_COLUMNS, type SessionRow } from './session-row.js';
import { receivedEventFields } from './session-payments.js';
import { quoteColumns, type Coin, type LockedQuote } from './locked-quotes.js';

export type { SessionRow };

export interface NewSession {
  id: string;
  merchantId: string;
  mode: Mode;
  /** The deployment's SESSION_LIFETIME_SECONDS: the lifetime of a merchant without its own. */
  defaultLifetimeSeconds: number;
  orderId: string;
  amountMinor: bigint;
  currency: string;
  description: string | null;
  merchantDomainId: string | null;
  lineItems: LineItemRecord[] | null;
  taxMinor: bigint | null;
  shippingMinor: bigint | null;
  successUrl: string | null;
  cancelUrl: string | null;
  metadata: Record<string, string>;
  targetCurrency: string;
  targetAmountMinor: bigint;
  exchangeRate: string | null;
  rateLockedAt: Date | null;
  network: NetworkId | null;
  token: TokenSymbol | null;
  /** Every coin's quote locked at creation; a coin left out is not offered. Must hold targetCurrency's. Absent: either
   *  coin at targetAmountMinor (no quote stored). */
  quotes?: Partial<Record<Coin, LockedQuote>>;
}

export const ORDER_ID_CONSTRAINT = 'payment_sessions_order_uq';

/** True when `err` is the order_id constraint refusing a second session for the same order. */
export const isOrderIdTaken = (err: unknown): boolean => isUniqueViolation(err, ORDER_ID_CONSTRAINT);

/** Inserts a session in the caller's transaction; the order_id constraint rejects a duplicate order. */
/** One statement: callers that write nothing else with it may pass the pool itself (autocommit, one round trip). */
export async function insertSession(trx: Kysely<Database>, s: NewSession): Promise<SessionRow> {
  const insert = trx
    .insertInto('payment_sessions')
    .values({
      id: s.id,
      merchant_id: s.merchantId,
      mode: s.mode,
      order_id: s.orderId,
      amount_minor: s.amountMinor,
      currency: s.currency,
      description: s.description,
      merchant_domain_id: s.merchantDomainId,
      line_items: s.lineItems === null ? null : JSON.stringify(s.lineItems),
      tax_minor: s.taxMinor,
      shipping_minor: s.shippingMinor,
      success_url: s.successUrl,
      cancel_url: s.cancelUrl,
      metadata: JSON.stringify(s.metadata),
      target_currency: s.targetCurrency,
      target_amount_minor: s.targetAmountMinor,
      exchange_rate: s.exchangeRate,
      rate_locked_at: s.rateLockedAt,
      network: s.network,
      token: s.token,
      ...quoteColumns(s.quotes ?? {}),
      hd_account: sql<number>`(select account_index from merchant_hd_accounts where merchant_id = ${s.merchantId} and mode = ${s.mode})`,
      // The merchant's own lifetime, else the deployment's (decisions.md: default 30 minutes, configurable per
      // merchant); created_at and expires_at share one clock.
      expires_at: sql<Date>`now() + (select coalesce(session_lifetime_seconds, ${s.defaultLifetimeSeconds}::integer) from merchants where id = ${s.merchantId}) * interval '1 second'`,
    })
    .returning(SESSION_COLUMNS)
    .compile();
  // Its text does not depend on the values (every column is always given): the API's hot write, named once
  // (src/db/named-statements.ts).
  nameStatement('sp_insert_session', insert.sql);
  const { rows } = await trx.executeQuery(insert);
  return rows[0]!;
}

/**
 * The session `id` when it belongs to this merchant and mode. Looked up by primary key alone, ownership checked on the
 * row: with `merchant_id` and `mode` in the WHERE clause the planner may walk payment_sessions_list_idx (merchant_id,
 * mode, created_at, id), every session of the merchant, instead of the primary key (docs/performance.md, "API auth
 * path").
 */
export async function findSession(db: Db, merchantId: string, mode: Mode, id: string): Promise<SessionRow | undefined> {
  const s = await db.selectFrom('payment_sessions').selectAll().where('id', '=', id).executeTakeFirst();
  return s && ownedBy(s, merchantId, mode) ? s : undefined;
}

/** True when the row belongs to this merchant and mode (a session of another is answered as not found). */
export function ownedBy(s: Pick<SessionRow, 'merchant_id' | 'mode'>, merchantId: string, mode: Mode): boolean {
  return s.merchant_id === merchantId && s.mode === mode;
}

export type CancelResult =
  | { kind: 'canceled'; session: SessionRow }
  | { kind: 'not_found' }
  | { kind: 'expired'; session: SessionRow }
  | { kind: 'paid'; session: SessionRow };

/**
 * Cancels an open, unexpired session and writes `payment.cancelled` in the same transaction; `onCanceled` runs in it
 * too (the API stores its answer under the request's Idempotency-Key there).
 */
export async function cancelSession(
  db: Db,
  merchantId: string,
  mode: Mode,
  id: string,
  onCanceled?: (trx: Transaction<Database>, session: SessionRow) => Promise<void>,
): Promise<CancelResult> {
  return db.transaction().execute(async (trx) => {
    const session = await trx
      .updateTable('payment_sessions')
      .set({ status: 'canceled', canceled_at: sql`now()` })
      .where('id', '=', id)
      .where('merchant_id', '=', merchantId)
      .where('mode', '=', mode)
      .where('status', 'in', SESSION_TRANSITIONS.cancel)
      .where('expires_at', '>', sql<Date>`now()`)
      .returningAll()
      .executeTakeFirst();
    if (session) {
      await insertOutboxEvent(trx, {
        merchantId,
        mode,
        type: PAYMENT_EVENT_TYPE.canceled,
        object: paymentEventObject(session, 'canceled'),
        aggregateId: session.id,
      });
      await onCanceled?.(trx, session);
      return { kind: 'canceled', session };
    }
    const current = await findSession(trx, merchantId, mode, id);
    if (!current) return { kind: 'not_found' };
    // Zero rows updated is a conflict, never a success: report why.
    if (current.status === 'paid') return { kind: 'paid', session: current };
    return { kind: 'expired', session: current };
  });
}

/** Guard consulted before a session expires: whether money may still arrive for it. */
export type ExpiryGuard = (trx: Transaction<Database>, session: SessionRow) => Promise<boolean>;

export interface ExpiryDeps {
  /** The registry's decimals, for the amount received that `payment.expired` names. */
  tokenDecimals: TokenDecimals;
  /**
   * Default: a provisional deposit in a block at or before expires_at, or a watcher that has not yet scanned past
   * expires_at, holds the expiry back (hasProvisionalDepositsBefore). Tests replace it.
   */
  mayStillBePaid?: ExpiryGuard;
  /** The form of an address shown to people (TRON base58), for the senders in payment.expired; default: as stored. */
  displayAddress?: (network: string, mode: Mode, canonical: string) => string;
}

const moneyMayStillArrive: ExpiryGuard = (trx, s) => hasProvisionalDepositsBefore(trx, s.id, s.expires_at);

/** Expires an open session past expires_at, writing `payment.expired` with the amount received. Idempotent. */
export async function expireSession(db: Db, id: string, deps: ExpiryDeps): Promise<'expired' | 'deferred' | 'unchanged'> {
  return db.transaction().execute(async (trx) => {
    const session = await trx
      .selectFrom('payment_sessions')
      .selectAll()
      .where('id', '=', id)
      .where('status', 'in', SESSION_TRANSITIONS.expire)
      .where('expires_at', '<=', sql<Date>`now()`)
      .forUpdate()
      .executeTakeFirst();
    if (!session) return 'unchanged';
    if (await (deps.mayStillBePaid ?? moneyMayStillArrive)(trx, session)) return 'deferred';
    const expired = await trx
      .updateTable('payment_sessions')
      .set({ status: 'expired', expired_at: sql`now()` })
      .where('id', '=', id)
      .where('status', 'in', SESSION_TRANSITIONS.expire)
      .returningAll()
      .executeTakeFirstOrThrow();
    await insertOutboxEvent(trx, {
      merchantId: expired.merchant_id,
      mode: expired.mode,
      type: PAYMENT_EVENT_TYPE.expired,
      object: {
        ...paymentEventObject(expired, 'expired', receivedAmount(expired, deps.tokenDecimals)),
        // Extension (issue 16 item 5): what the session received, transfer by transfer; refundable (docs/refunds.md).
        ...(await receivedEventFields(
          trx,
          expired,
          (network, token) => deps.tokenDecimals(network, expired.mode, token),
          deps.displayAddress ? (network, c) => deps.displayAddress!(network, expired.mode, c) : undefined,
        )),
      },
      aggregateId: expired.id,
    });
    return 'expired';
  });
}

/** What was received, for payment.expired: empty strings when nothing arrived. */
function receivedAmount(s: SessionRow, tokenDecimals: TokenDecimals): { text: string; currency: string } {
  if (s.received_base === 0n || !s.token) return { text: '', currency: '' };
  const decimals = sessionTokenDecimals(s, tokenDecimals);
  return { text: decimals === undefined ? s.received_base.toString() : formatBaseUnits(s.received_base, decimals), currency: s.token };
}

/** The registry's decimals of the token a session chose, when this deployment knows them. */
export function sessionTokenDecimals(s: SessionRow, tokenDecimals: TokenDecimals): number | undefined {
  return s.network && s.token ? tokenDecimals(s.network, s.mode, s.token) : undefined;
}

/** Open sessions past expiry, oldest first: the sweeper's work list. */
export async function overdueSessionIds(db: Db, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('payment_sessions')
    .select('id')
    .where('status', '=', 'open')
    .where('expires_at', '<=', sql<Date>`now()`)
    .orderBy('expires_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

export type SessionPage = NewestFirstPage<SessionRow>;

/**
 * One page, newest first. With `after` (a session id of this merchant and mode), the rows strictly after that one in
 * (created_at, id) order, whatever was inserted since; null when `after` names no such session.
 */
export async function listSessions(
  db: Db,
  merchantId: string,
  mode: Mode,
  opts: { offset: number; limit: number; status?: string; orderId?: string; after?: string },
): Promise<SessionPage | null> {
  let base = db.selectFrom('payment_sessions').where('merchant_id', '=', merchantId).where('mode', '=', mode);
  if (opts.status) base = base.where('status', '=', opts.status as SessionRow['status']);
  if (opts.orderId) base = base.where('order_id', '=', opts.orderId);
  return newestFirstPage(db, 'payment_sessions', base.selectAll(), { merchantId, mode }, opts);
}
