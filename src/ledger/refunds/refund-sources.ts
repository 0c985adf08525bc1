import { sql, type Selectable, type Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database, PaymentSessionsTable } from '../../db/schema.js';
import type { TokenDecimals } from '../../domain/chain-lookup.js';
import { invalidRequest } from '../../domain/errors.js';
import { LIVE_REFUND_STATUSES } from '../../domain/refund-state.js';
import { scaleDown } from '../../domain/money.js';
import { STABLECOIN_EXPONENT, type TokenSymbol } from '../../../chains/vocabulary.js';

// What a refund pays back, resolved under locks (docs/refunds.md, "Money back to customers"):
// - a paid session: what arrived (its settlement), to the sender of the paying transfer;
// - a session that closed unpaid (expired, or canceled) after receiving part of the amount: its credited deposits;
// - one unmatched deposit (late, to a closed or paid session, another token or network than selected).
// Each source counts only its own refunds against what it holds: refunds of a session have deposit_id null; refunds of
// an unmatched deposit name it, so the two never eat into each other.

type SessionRow = Selectable<PaymentSessionsTable>;

export type RefundSourceKind = 'paid_session' | 'unpaid_session' | 'unmatched_deposit';

export interface RefundSource {
  kind: RefundSourceKind;
  session: SessionRow;
  depositId: string | null;
  network: string;
  token: TokenSymbol;
  /** Base units that arrived and may be paid back (before refunds). */
  receivedBase: bigint;
  /** The sender to pay back by default; null when unknown or when the credited transfers came from several senders. */
  sender: string | null;
  /** When the refund window starts. */
  since: Date;
}

/** The session of a refund (by session id, or the deposit's), locked FOR UPDATE; undefined when there is none. */
export async function lockRefundSession(
  trx: Transaction<Database>,
  target: { sessionId: string | null; depositId: string | null },
): Promise<SessionRow | undefined> {
  let sessionId = target.sessionId;
  if (target.depositId !== null) {
    const d = await trx.selectFrom('deposits').select('session_id').where('id', '=', target.depositId).executeTakeFirst();
    sessionId = d?.session_id ?? null;
  }
  if (sessionId === null) return undefined;
  return trx.selectFrom('payment_sessions').selectAll().where('id', '=', sessionId).forUpdate().executeTakeFirst();
}

/** Resolves the source of a refund of `session` (already locked and checked to be the merchant's). Throws spec errors. */
export async function resolveRefundSource(
  trx: Transaction<Database>,
  session: SessionRow,
  depositId: string | null,
): Promise<RefundSource> {
  if (depositId !== null) return depositSource(trx, session, depositId);
  if (session.status === 'paid') {
    const settlement = await trx
      .selectFrom('session_settlements as s')
      .innerJoin('deposits as d', 'd.id', 's.paying_deposit_id')
      .select(['s.network', 's.token', 's.received_base', 's.paid_at', 'd.from_address'])
      .where('s.session_id', '=', session.id)
      .executeTakeFirst();
    if (!settlement) throw invalidRequest('INVALID_SESSION_STATUS', 'The payment of this session is not settled yet.', 'session_id');
    return {
      kind: 'paid_session',
      session,
      depositId: null,
      network: settlement.network,
      token: settlement.token as TokenSymbol,
      receivedBase: settlement.received_base,
      sender: settlement.from_address,
      since: session.paid_at ?? settlement.paid_at,
    };
  }
  if ((session.status === 'expired' || session.status === 'canceled') && session.received_base > 0n && session.network && session.token) {
    const senders = await trx
      .selectFrom('deposits')
      .select('from_address')
      .distinct()
      .where('session_id', '=', session.id)
      .where('disposition', '=', 'credited')
      .execute();
    return {
      kind: 'unpaid_session',
      session,
      depositId: null,
      network: session.network,
      token: session.token,
      receivedBase: session.received_base,
      sender: senders.length === 1 ? senders[0]!.from_address : null,
      since: session.expired_at ?? session.canceled_at ?? session.expires_at,
    };
  }
  const why =
    session.status === 'open'
      ? 'This payment session is still open; refund it once it is paid, or once it has expired.'
      : 'This payment session received nothing that can be refunded; unmatched deposits are refunded with deposit_id.';
  throw invalidRequest('INVALID_SESSION_STATUS', why, 'session_id');
}

async function depositSource(trx: Transaction<Database>, session: SessionRow, depositId: string): Promise<RefundSource> {
  const d = await trx.selectFrom('deposits').selectAll().where('id', '=', depositId).forUpdate().executeTakeFirstOrThrow();
  if (d.status !== 'confirmed' || d.disposition !== 'unmatched') {
    const state = d.status !== 'confirmed' ? `${d.status} (not final yet)` : 'credited to its session (refund the session)';
    throw invalidRequest(
      'INVALID_DEPOSIT_STATUS',
      `Only unmatched, final deposits can be refunded this way; this one is ${state}.`,
      'deposit_id',
    );
  }
  if (d.unmatched_reason === 'unsupported_token')
    throw invalidRequest(
      'INVALID_DEPOSIT_STATUS',
      `Deposits of ${d.token}, a look-alike of the token, are not credited and cannot be refunded by the gateway (docs/operations.md).`,
      'deposit_id',
    );
  if (d.token !== 'USDT' && d.token !== 'USDC')
    throw invalidRequest('INVALID_DEPOSIT_STATUS', `Deposits of ${d.token} cannot be refunded.`, 'deposit_id');
  return {
    kind: 'unmatched_deposit',
    session,
    depositId: d.id,
    network: d.network,
    token: d.token,
    receivedBase: d.amount_base,
    sender: d.from_address,
    since: d.confirmed_at ?? d.block_time,
  };
}

/** Minor units already refunded or in progress against this source (failed and canceled refunds do not count). */
export async function refundedAgainst(trx: Transaction<Database>, source: RefundSource): Promise<bigint> {
  let q = trx
    .selectFrom('refunds')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<bigint>('amount_minor'), sql<bigint>`0`).as('total'))
    .where('status', 'in', LIVE_REFUND_STATUSES);
  q =
    source.depositId !== null
      ? q.where('deposit_id', '=', source.depositId)
      : q.where('session_id', '=', source.session.id).where('deposit_id', 'is', null);
  return BigInt((await q.executeTakeFirstOrThrow()).total);
}

export interface Refundable {
  merchantId: string;
  mode: 'test' | 'live';
  sessionId: string;
  depositId: string | null;
  token: TokenSymbol;
  network: string;
  /** Minor units still refundable (what arrived, floored to cents, less live refunds); null when decimals are unknown. */
  remainingMinor: bigint | null;
}

/**
 * What a session or an unmatched deposit can still pay back (for the operator CLI's default amount). Read only: the
 * refund itself re-checks everything under locks. Throws the same spec errors as a refund would.
 */
export async function refundable(
  db: Db,
  tokenDecimals: TokenDecimals,
  target: { sessionId: string | null; depositId: string | null },
): Promise<Refundable | undefined> {
  return db.transaction().execute(async (trx) => {
    const session = await lockRefundSession(trx, target);
    if (!session) return undefined;
    const source = await resolveRefundSource(trx, session, target.depositId);
    const decimals = tokenDecimals(source.network, session.mode, source.token);
    const refunded = await refundedAgainst(trx, source);
    return {
      merchantId: session.merchant_id,
      mode: session.mode,
      sessionId: session.id,
      depositId: source.depositId,
      token: source.token,
      network: source.network,
      remainingMinor: decimals === undefined ? null : scaleDown(source.receivedBase, decimals, STABLECOIN_EXPONENT, 'down') - refunded,
    };
  });
}
