import { sql, type Selectable, type Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database, PayoutAttemptsTable } from '../../db/schema.js';
import { REFUND_FAILURE_MESSAGES, REFUND_TRANSITIONS, deliveredMinor, type RefundFailureCode } from '../../domain/refund-state.js';
import { hasIdShape } from '../../domain/ids.js';
import { REFUND_EVENT_TYPE, refundEventObject } from '../../domain/events/refund.js';
import { insertOutboxEvent } from '../core/outbox.js';
import type { RefundRow } from './refunds.js';
import { EXTERNAL_ACCOUNT, addressAccount, feeLegs, journalAsset, transferLegs } from '../journal/accounts.js';
import { recordMovement } from '../journal/entries.js';
import { PAYOUT_ATTEMPTS, attemptsOf, blockingAttemptIdsOf, recordAttempt, setAttemptStateOf } from '../outbound/attempt-store.js';

// The ledger side of refund payouts. The payout engine (src/refunds/) drives the chain; every state change of a
// refund or an attempt happens here, each with its event in the same transaction.

export type PayoutAttempt = Selectable<PayoutAttemptsTable>;

/** pending → processing. Answers the refund as it is now (processing, or whatever state stopped the claim). */
export async function claimRefundForProcessing(db: Db, refundId: string): Promise<RefundRow | undefined> {
  const claimed = await db
    .updateTable('refunds')
    .set({ status: 'processing' })
    .where('id', '=', refundId)
    .where('status', 'in', REFUND_TRANSITIONS.startProcessing)
    .returningAll()
    .executeTakeFirst();
  return claimed ?? (await db.selectFrom('refunds').selectAll().where('id', '=', refundId).executeTakeFirst());
}

export async function payoutAttempts(db: Db, refundId: string): Promise<PayoutAttempt[]> {
  return attemptsOf<PayoutAttempt>(db, PAYOUT_ATTEMPTS, refundId);
}

/** Under the refund row's lock: the attempts that block a new signature (signed, broadcast or confirmed), newest first. */
export const blockingAttemptIds = (trx: Transaction<Database>, refundId: string): Promise<bigint[]> =>
  blockingAttemptIdsOf(trx, PAYOUT_ATTEMPTS, refundId);

/** Locks the refund row; undefined unless it is still processing (a cancel won the race). */
export async function lockProcessingRefund(trx: Transaction<Database>, refundId: string): Promise<RefundRow | undefined> {
  return trx.selectFrom('refunds').selectAll().where('id', '=', refundId).where('status', '=', 'processing').forUpdate().executeTakeFirst();
}

/**
 * The operator's record of a landed transaction that paid this refund although the ledger never signed it (a restored
 * older backup: `payouts settle-from-chain`). Stored as a broadcast attempt with no bytes, so the engine settles the
 * refund from the landed transaction's own logs like any attempt of its own. Refused unless the refund is open and
 * has no attempt that may land, and when the transaction is already recorded (for this refund or another).
 */
export async function recordChainPayout(
  db: Db,
  refundId: string,
  a: { sender: string; txHash: string; nonce: bigint | null; detail: string },
): Promise<
  | { kind: 'recorded'; attempt: PayoutAttempt }
  | { kind: 'not_open'; status: string }
  | { kind: 'has_attempts' }
  | { kind: 'already_recorded'; refundId: string }
> {
  return db.transaction().execute(async (trx) => {
    const refund = await trx.selectFrom('refunds').selectAll().where('id', '=', refundId).forUpdate().executeTakeFirst();
    if (!refund || (refund.status !== 'pending' && refund.status !== 'processing'))
      return { kind: 'not_open' as const, status: refund?.status ?? 'missing' };
    if ((await blockingAttemptIds(trx, refundId)).length > 0) return { kind: 'has_attempts' as const };
    // One transaction pays one refund (the unique index would refuse it too, less clearly).
    const taken = await trx
      .selectFrom('payout_attempts')
      .select('refund_id')
      .where('network', '=', refund.network)
      .where('mode', '=', refund.mode)
      .where('tx_hash', '=', a.txHash)
      .executeTakeFirst();
    if (taken) return { kind: 'already_recorded' as const, refundId: taken.refund_id };
    if (refund.status === 'pending') await trx.updateTable('refunds').set({ status: 'processing' }).where('id', '=', refundId).execute();
    const signed = { network: refund.network, hash: a.txHash, raw: null, sender: a.sender, nonce: a.nonce?.toString() ?? null };
    const attempt = await recordAttempt<PayoutAttempt>(trx, PAYOUT_ATTEMPTS, refund, {
      ...a,
      signed: { ...signed, validUntilHeight: null, validUntilTimeMs: null },
      feeBumpPercent: 0,
    });
    await setAttemptStateOf(trx, PAYOUT_ATTEMPTS, attempt.id, 'broadcast', a.detail);
    return { kind: 'recorded' as const, attempt };
  });
}

/**
 * processing → completed with the transaction hash, a receipt number and the base units the destination received
 * (`deliveredBase`, from the landed transaction; below amount_base when the token took a fee), and `refund.succeeded`,
 * in one transaction.
 */
export async function completeRefund(
  db: Db,
  refundId: string,
  attempt: Pick<PayoutAttempt, 'id' | 'tx_hash'>,
  deliveredBase: bigint,
  landed?: LandedPayout,
): Promise<RefundRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const refund = await lockProcessingRefund(trx, refundId);
    if (!refund) return undefined;
    if (landed) await journalRefundPayout(trx, refund, attempt.tx_hash, landed);
    // This attempt confirmed, any other live one replaced (at most one attempt of a refund can land), in one statement.
    await trx
      .updateTable('payout_attempts')
      .set({ state: sql`case when id = ${attempt.id} then 'confirmed' else 'replaced' end`, settled_at: sql`now()` })
      .where('refund_id', '=', refundId)
      .where((eb) => eb.or([eb('id', '=', attempt.id), eb('state', 'in', ['signed', 'broadcast'])]))
      .execute();
    const completed: RefundRow = { ...refund, status: 'completed', transaction_hash: attempt.tx_hash, delivered_base: deliveredBase };
    await insertRefundEvent(trx, completed, 'completed');
    // Last: the receipt number's counter row is the merchant's (every completion of the merchant waits for it until
    // this transaction commits), so it is taken by the statement that completes the refund, right before the commit.
    const done = await completeWithReceipt(trx, refundId, attempt.tx_hash, deliveredBase);
    if (!done) throw new Error(`refund ${refundId} could not be completed`);
    return done;
  });
}

/** What the landed payout moved, for the journal: base units that left the hot wallet, and the fee it burnt. */
export interface LandedPayout {
  /** The hot wallet (canonical address). */
  sender: string;
  blockHeight: bigint;
  blockHash: string;
  /** Native base units burnt by the sender. */
  fee: bigint;
  /** Token base units that left the hot wallet: delivered plus any part the token took elsewhere. */
  sent: bigint;
  /** Native base units the hot wallet locked in an account the payout created (Solana: the recipient's token account). */
  rentPaid?: bigint;
}

/** Journal: hot wallet → customer (and anything the token took elsewhere), and the network fee the hot wallet burnt. */
async function journalRefundPayout(trx: Transaction<Database>, refund: RefundRow, txHash: string, p: LandedPayout): Promise<void> {
  const chain = { network: refund.network, mode: refund.mode };
  const wallet = addressAccount(chain.network, chain.mode, p.sender);
  await recordMovement(trx, {
    ...chain,
    txHash,
    legKey: 'tx',
    kind: 'refund_payout',
    blockHeight: p.blockHeight,
    blockHash: p.blockHash,
    merchantId: refund.merchant_id,
    sessionId: hasIdShape(refund.session_id, 'pay') ? null : refund.session_id,
    object: { type: 'refund', id: refund.id },
    legs: [
      ...transferLegs(journalAsset(chain.network, chain.mode, refund.token), wallet, EXTERNAL_ACCOUNT, p.sent),
      ...feeLegs(chain, p.sender, p.fee),
      // Rent is booked like a fee (docs/journal.md): the recipient owns the account it is locked in.
      ...feeLegs(chain, p.sender, p.rentPaid ?? 0n),
    ],
  });
}

/**
 * pending or processing → failed with a clear reason, and `refund.failed`, in one transaction. `txHash`: the mined
 * transaction that failed (reverted, or moved nothing to the destination), kept in transaction_hash.
 */
export async function failRefund(
  db: Db,
  refundId: string,
  code: RefundFailureCode,
  detail?: string,
  txHash?: string,
  opts: { unsent?: boolean } = {},
): Promise<RefundRow | undefined> {
  return db.transaction().execute(async (trx) => {
    // Refused before signing (`unsent`): only while no attempt can still land. A duplicate run of this refund may have
    // signed and sent it since this one looked (its pre-flight then sees the tokens already gone): it is followed.
    if (opts.unsent && (!(await lockProcessingRefund(trx, refundId)) || (await blockingAttemptIds(trx, refundId)).length > 0))
      return undefined;
    const reason = detail ? `${REFUND_FAILURE_MESSAGES[code]} (${detail.slice(0, 300)})` : REFUND_FAILURE_MESSAGES[code];
    const failed = await trx
      .updateTable('refunds')
      .set({ status: 'failed', failure_reason: reason, processed_at: sql`now()`, ...(txHash ? { transaction_hash: txHash } : {}) })
      .where('id', '=', refundId)
      .where('status', 'in', REFUND_TRANSITIONS.fail)
      .returningAll()
      .executeTakeFirst();
    if (!failed) return undefined;
    await trx
      .updateTable('payout_attempts')
      .set({ state: 'failed', settled_at: sql`now()` })
      .where('refund_id', '=', refundId)
      .where('state', 'in', ['signed', 'broadcast'])
      .execute();
    await insertRefundEvent(trx, failed, 'failed');
    return failed;
  });
}

async function insertRefundEvent(trx: Transaction<Database>, r: RefundRow, outcome: 'completed' | 'failed'): Promise<void> {
  // Subscription flow (a pay_ payment): refund_id is our re_ id, the merchant's id is external_refund_id, and
  // original_currency is the currency the payment was billed in (interface.md: Refund events).
  const subscriptionFlow = hasIdShape(r.session_id, 'pay');
  const billed = subscriptionFlow
    ? await trx.selectFrom('payment_sessions').select('currency').where('id', '=', r.session_id).executeTakeFirst()
    : undefined;
  await insertOutboxEvent(trx, {
    merchantId: r.merchant_id,
    mode: r.mode,
    type: REFUND_EVENT_TYPE[outcome],
    object: refundEventObject({
      outcome,
      sessionId: r.session_id,
      orderId: r.order_id,
      refundId: subscriptionFlow ? r.id : r.refund_id,
      amountMinor: r.amount_minor,
      currency: r.currency,
      ...(r.deposit_id !== null ? { depositId: r.deposit_id } : {}),
      ...(outcome === 'failed' && r.transaction_hash !== null ? { transactionHash: r.transaction_hash } : {}),
      ...(r.delivered_base !== null ? { deliveredMinor: deliveredMinor({ ...r, delivered_base: r.delivered_base }) } : {}),
      ...(subscriptionFlow
        ? { subscription: { externalRefundId: r.refund_id, ...(billed ? { originalCurrency: billed.currency.toUpperCase() } : {}) } }
        : {}),
    }),
    aggregateId: r.id,
  });
}

/**
 * processing → completed with its transaction, what was delivered and its receipt number RCPT-<YYYYMMDD>-<6 digits>,
 * unique per merchant (decisions.md): a per-merchant, per-UTC-day counter, advanced in the same statement.
 */
async function completeWithReceipt(
  trx: Transaction<Database>,
  refundId: string,
  txHash: string,
  deliveredBase: bigint,
): Promise<RefundRow | undefined> {
  const day = new Date().toISOString().slice(0, 10).replaceAll('-', '');
  const row = await trx
    .with('receipt', (q) =>
      q
        .insertInto('receipt_counters')
        .values((eb) => ({
          merchant_id: eb.selectFrom('refunds').select('merchant_id').where('id', '=', refundId),
          day,
          last: 1,
        }))
        .onConflict((oc) => oc.columns(['merchant_id', 'day']).doUpdateSet({ last: sql`receipt_counters.last + 1` }))
        .returning('last'),
    )
    .updateTable('refunds')
    .from('receipt')
    .set({
      status: 'completed',
      transaction_hash: txHash,
      receipt_number: sql<string>`${`RCPT-${day}-`} || lpad(receipt.last::text, 6, '0')`,
      processed_at: sql`now()`,
      failure_reason: null,
      delivered_base: deliveredBase,
    })
    .where('refunds.id', '=', refundId)
    .where('refunds.status', 'in', REFUND_TRANSITIONS.complete)
    .returningAll('refunds')
    .returning('receipt.last as receipt_last')
    .executeTakeFirst();
  if (!row) return undefined;
  const { receipt_last, ...refund } = row;
  if (receipt_last > 999_999) throw new Error('more than 999,999 receipts in one day for one merchant');
  return refund;
}

/** Refunds that are pending or processing: the sweeper's work list (a job lost with Redis is found again here). */
export async function openRefundIds(db: Db, olderThanMs: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('refunds')
    .select('id')
    .where('status', 'in', ['pending', 'processing'])
    .where('created_at', '<', new Date(Date.now() - olderThanMs))
    .orderBy('created_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}
