import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database, SubscriptionChargesTable } from '../../db/schema.js';
import { insertInvoiceEvent } from './invoices.js';
import { EXTERNAL_ACCOUNT, addressAccount, feeLegs, journalAsset, transferLegs } from '../journal/accounts.js';
import { recordMovement } from '../journal/entries.js';
import { nextAfterPaid, type LifecycleDeps } from './lifecycle.js';
import { SUBSCRIPTION_TRANSITIONS, cancelNow, insertSubscriptionEvent, type SubscriptionRow } from './subscriptions.js';
import { insertChargePayment } from '../payments/charge-payment.js';

// The ledger side of subscription charges. The outbound engine (src/outbound/, with src/subscriptions/charge-engine.ts) drives the chain;
// every state change of a charge, its invoice and its subscription happens here with its events.
//
// A succeeded charge becomes a payment (pay_): a paid payment-session record with the charge's Transfer as its
// paying deposit. That is what decisions.md calls "the payment-session record behind one invoice", and it makes the
// refund machinery (which refunds sessions) work unchanged for subscription payments.

export type ChargeRow = Selectable<SubscriptionChargesTable>;

export async function loadCharge(db: Db, id: bigint): Promise<ChargeRow | undefined> {
  return db.selectFrom('subscription_charges').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Locks a charge that is still pending (nothing signed yet); undefined when another worker got there first. */
export async function lockPendingCharge(trx: Transaction<Database>, id: bigint): Promise<ChargeRow | undefined> {
  return trx
    .selectFrom('subscription_charges')
    .selectAll()
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .forUpdate()
    .executeTakeFirst();
}

export interface ChargeAttemptInput {
  nonce: bigint | null;
  txHash: string;
  signed: Record<string, string | null>;
  feeBumpPercent?: number;
}

/**
 * pending → signed with the bytes (its first, or a fresh attempt): committed BEFORE the first broadcast. Answers the
 * attempt's id. Bytes identical to a dropped attempt of this charge (the same hash: signed again at the same nonce
 * with the same fees) revive that attempt rather than adding a second row; the same hash on a live attempt is refused
 * (nothing is stored, nothing is sent).
 */
export async function recordSignedCharge(trx: Transaction<Database>, id: bigint, s: ChargeAttemptInput): Promise<bigint> {
  // One statement, one round trip: this runs under the charger's nonce lock, the serial point of all its charges.
  const nonce = s.nonce === null ? null : s.nonce.toString();
  const signed = JSON.stringify(s.signed);
  const r = await sql<{ id: bigint }>`
    with charge as (
      update subscription_charges set state = 'signed', nonce = ${nonce}, tx_hash = ${s.txHash}, signed = ${signed}::jsonb, signed_at = now()
      where id = ${id} and state = 'pending' returning id
    )
    insert into subscription_charge_attempts (charge_id, nonce, tx_hash, signed, fee_bump_percent)
    select id, ${nonce}, ${s.txHash}, ${signed}::jsonb, ${s.feeBumpPercent ?? 0} from charge
    on conflict (charge_id, tx_hash) do update set state = 'live', dropped_reason = null, created_at = now()
      where subscription_charge_attempts.state = 'dropped'
    returning id`.execute(trx);
  return attemptId(r.rows[0], id, s.txHash);
}

/** A replacement's (or fresh) attempt row; identical bytes revive a dropped attempt of the charge, as above. */
async function insertAttempt(trx: Transaction<Database>, chargeId: bigint, s: ChargeAttemptInput): Promise<bigint> {
  const row = await trx
    .insertInto('subscription_charge_attempts')
    .values({
      charge_id: chargeId,
      nonce: s.nonce === null ? null : s.nonce.toString(),
      tx_hash: s.txHash,
      signed: JSON.stringify(s.signed),
      fee_bump_percent: s.feeBumpPercent ?? 0,
    })
    .onConflict((oc) =>
      oc
        .columns(['charge_id', 'tx_hash'])
        .doUpdateSet({ state: 'live', dropped_reason: null, created_at: sql<Date>`now()` })
        .where('subscription_charge_attempts.state', '=', 'dropped'),
    )
    .returning('id')
    .executeTakeFirst();
  return attemptId(row, chargeId, s.txHash);
}

/** Throws (rolling the signing transaction back) when the hash is already a live attempt of the charge. */
function attemptId(row: { id: bigint } | undefined, chargeId: bigint, txHash: string): bigint {
  if (!row) throw new Error(`transaction ${txHash} is already a live attempt of charge ${chargeId}, or the charge is no longer pending`);
  return row.id;
}

export type ChargeAttempt = Selectable<Database['subscription_charge_attempts']>;

/** The attempts of a charge that may still land, oldest first. */
export async function liveChargeAttempts(db: Kysely<Database>, chargeId: bigint): Promise<ChargeAttempt[]> {
  return db
    .selectFrom('subscription_charge_attempts')
    .selectAll()
    .where('charge_id', '=', chargeId)
    .where('state', '=', 'live')
    .orderBy('id')
    .execute();
}

/** An attempt proven unable to land (expired, or its nonce taken by another transaction). */
export async function dropChargeAttempt(db: Db, attemptId: bigint, reason: string): Promise<void> {
  await db
    .updateTable('subscription_charge_attempts')
    .set({ state: 'dropped', dropped_reason: reason.slice(0, 500) })
    .where('id', '=', attemptId)
    .where('state', '=', 'live')
    .execute();
}

/**
 * Locks a charge in flight for a fee-bumped replacement of `replacingId`: true only if that is still the newest live
 * attempt (so two workers never both replace). Returns false when raced.
 */
export async function lockChargeForReplacement(trx: Transaction<Database>, chargeId: bigint, replacingId: bigint): Promise<boolean> {
  const charge = await lockChargeInFlight(trx, chargeId);
  if (!charge) return false;
  const newest = await trx
    .selectFrom('subscription_charge_attempts')
    .select('id')
    .where('charge_id', '=', chargeId)
    .where('state', '=', 'live')
    .orderBy('id', 'desc')
    .executeTakeFirst();
  return newest !== undefined && BigInt(newest.id) === BigInt(replacingId);
}

/** A replacement at the same nonce, after lockChargeForReplacement: the charge now names its bytes. Answers the attempt's id. */
export async function recordReplacementAttempt(trx: Transaction<Database>, chargeId: bigint, s: ChargeAttemptInput): Promise<bigint> {
  await trx
    .updateTable('subscription_charges')
    .set({ tx_hash: s.txHash, signed: JSON.stringify(s.signed), signed_at: sql`now()` })
    .where('id', '=', chargeId)
    .execute();
  return insertAttempt(trx, chargeId, s);
}

/**
 * signed|broadcast → pending once every attempt is proven dead: the next step runs the pre-flight checks again and
 * signs afresh. Guarded under the row lock by the absence of live attempts.
 */
export async function reopenCharge(db: Db, chargeId: bigint): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const charge = await lockChargeInFlight(trx, chargeId);
    if (!charge) return false;
    const live = await trx
      .selectFrom('subscription_charge_attempts')
      .select('id')
      .where('charge_id', '=', chargeId)
      .where('state', '=', 'live')
      .executeTakeFirst();
    if (live) return false;
    await trx.updateTable('subscription_charges').set({ state: 'pending' }).where('id', '=', chargeId).execute();
    return true;
  });
}

export async function markChargeBroadcast(db: Db, id: bigint): Promise<void> {
  await db.updateTable('subscription_charges').set({ state: 'broadcast' }).where('id', '=', id).where('state', '=', 'signed').execute();
}

export async function openChargeIds(db: Db, limit: number): Promise<bigint[]> {
  const rows = await db
    .selectFrom('subscription_charges')
    .select('id')
    .where('state', 'in', ['pending', 'signed', 'broadcast'])
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => BigInt(r.id));
}

export interface SettledTransfer {
  txHash: string;
  logIndex: number;
  /** What the settlement address received (after any fee the token took): the payment's received amount. */
  amount: bigint;
  tokenContract: string;
  block: { height: bigint; hash: string; time: Date };
  /** The charger that sent the transferFrom and the network fee it burnt (native base units), for the journal. */
  charger?: string;
  fee?: bigint;
  /** Solana: the rent the charger locked creating the settlement address's token account (native base units). */
  rentPaid?: bigint;
}

/** Locks a charge still in flight (signed or broadcast); undefined once it settled or went back to pending. */
export async function lockChargeInFlight(trx: Transaction<Database>, chargeId: bigint): Promise<ChargeRow | undefined> {
  return trx
    .selectFrom('subscription_charges')
    .selectAll()
    .where('id', '=', chargeId)
    .where('state', 'in', ['signed', 'broadcast'])
    .forUpdate()
    .executeTakeFirst();
}

/**
 * signed|broadcast → succeeded: the payment record, its deposit and settlement, the invoice paid (invoice.paid) and
 * the subscription active with its next action (subscription.active), in one transaction.
 */
export async function chargeSucceeded(deps: LifecycleDeps, chargeId: bigint, t: SettledTransfer): Promise<string | undefined> {
  return deps.db.transaction().execute(async (trx) => {
    const charge = await lockChargeInFlight(trx, chargeId);
    if (!charge) return undefined;
    const now = deps.clock.now();
    const sub = await trx
      .selectFrom('subscriptions')
      .selectAll()
      .where('id', '=', charge.subscription_id)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const invoice = await trx.selectFrom('invoices').selectAll().where('id', '=', charge.invoice_id).forUpdate().executeTakeFirstOrThrow();
    const { paymentId } = await insertChargePayment(trx, {
      merchantId: charge.merchant_id,
      mode: charge.mode,
      network: charge.network,
      token: charge.token,
      invoice: { id: invoice.id, amountDueMinor: invoice.amount_due_minor, currency: invoice.currency },
      subscription: sub,
      payer: charge.owner_address,
      destination: charge.destination_address,
      dueBase: charge.amount_base,
      transfer: t,
      at: now,
    });
    // Journal: customer → settlement address (what it received), the fee the charger burnt and, on Solana, the rent it
    // locked creating the settlement address's token account (charger → fees:solana, as refunds and deposit setups).
    const ref = { network: charge.network, mode: charge.mode };
    await recordMovement(trx, {
      ...ref,
      txHash: t.txHash,
      legKey: 'tx',
      kind: 'charge',
      blockHeight: t.block.height,
      blockHash: t.block.hash,
      merchantId: charge.merchant_id,
      sessionId: paymentId,
      object: { type: 'invoice', id: invoice.id },
      legs: [
        ...transferLegs(
          journalAsset(ref.network, ref.mode, charge.token),
          EXTERNAL_ACCOUNT,
          addressAccount(ref.network, ref.mode, charge.destination_address),
          t.amount,
        ),
        ...(t.charger && t.fee ? feeLegs(ref, t.charger, t.fee) : []),
        ...(t.charger && t.rentPaid ? feeLegs(ref, t.charger, t.rentPaid) : []),
      ],
    });
    await trx
      .updateTable('subscription_charges')
      .set({ state: 'succeeded', payment_id: paymentId, settled_at: sql`now()`, delivered_base: t.amount })
      .where('id', '=', charge.id)
      .execute();
    const paid = await trx
      .updateTable('invoices')
      .set({
        status: 'paid',
        payment_status: 'paid',
        amount_paid_minor: invoice.amount_due_minor,
        payment_id: paymentId,
        paid_at: now,
        attempt_count: sql`attempt_count + 1`,
      })
      .where('id', '=', invoice.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await insertInvoiceEvent(trx, paid, 'invoice.paid', now);

    await activateAfterPaidCharge(trx, deps, sub, now);
    return paymentId;
  });
}

/** A subscription whose charge paid it becomes active with its next action (subscription.active), unless it ended. */
async function activateAfterPaidCharge(trx: Transaction<Database>, deps: LifecycleDeps, sub: SubscriptionRow, now: Date): Promise<void> {
  if ((SUBSCRIPTION_TRANSITIONS.activate as readonly string[]).includes(sub.status)) {
    const paidPeriods = sub.paid_periods + 1;
    const next = nextAfterPaid(sub, paidPeriods);
    const active = await trx
      .updateTable('subscriptions')
      .set({ status: 'active', paid_periods: paidPeriods, ...next, updated_at: now })
      .where('id', '=', sub.id)
      .where('status', 'in', SUBSCRIPTION_TRANSITIONS.activate)
      .returningAll()
      .executeTakeFirstOrThrow();
    await insertSubscriptionEvent(trx, active, 'subscription.active', deps.checkoutBaseUrl, now);
  }
}

/**
 * A charge that moved nothing (refused before signing, or reverted): invoice.payment_failed, the subscription
 * past_due with its next retry, or canceled (payment_failed) when the retries are spent. A subscription that was
 * never paid stays incomplete and ends incomplete_expired instead.
 */
export async function chargeFailed(
  deps: LifecycleDeps,
  chargeId: bigint,
  reason: string,
  opts: { unsent?: boolean } = {},
): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    // Refused before signing (`unsent`): only while still pending (nothing signed). Another scheduler may have signed
    // it since this one looked (its pre-flight then sees the allowance already spent): it is followed, not failed.
    const charge = await trx
      .selectFrom('subscription_charges')
      .selectAll()
      .where('id', '=', chargeId)
      .where('state', 'in', opts.unsent ? ['pending'] : ['pending', 'signed', 'broadcast'])
      .forUpdate()
      .executeTakeFirst();
    if (!charge) return false;
    const now = deps.clock.now();
    await trx
      .updateTable('subscription_charges')
      .set({ state: 'failed', failure_reason: reason.slice(0, 500), settled_at: sql`now()` })
      .where('id', '=', charge.id)
      .execute();
    const sub = await trx
      .selectFrom('subscriptions')
      .selectAll()
      .where('id', '=', charge.subscription_id)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const invoice = await trx
      .updateTable('invoices')
      .set({
        payment_status: 'failed',
        attempt_count: sql`attempt_count + 1`,
        first_failed_at: sql`coalesce(first_failed_at, ${now}::timestamptz)`,
      })
      .where('id', '=', charge.invoice_id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await insertInvoiceEvent(trx, invoice, 'invoice.payment_failed', now);
    if (!(SUBSCRIPTION_TRANSITIONS.pastDue as readonly string[]).includes(sub.status)) return true; // canceled meanwhile

    const retriesDone = invoice.attempt_count - 1;
    const offsets = deps.settings.retryOffsetsMs;
    if (retriesDone < offsets.length) {
      const at = new Date(invoice.first_failed_at!.getTime() + offsets[retriesDone]!);
      const status = sub.status === 'incomplete' ? 'incomplete' : 'past_due';
      const updated = await trx
        .updateTable('subscriptions')
        .set({ status, next_action: 'retry', next_action_at: at, updated_at: now })
        .where('id', '=', sub.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      if (sub.status !== status) await insertSubscriptionEvent(trx, updated, 'subscription.past_due', deps.checkoutBaseUrl, now);
      return true;
    }
    await trx.updateTable('invoices').set({ status: 'uncollectible' }).where('id', '=', invoice.id).execute();
    if (sub.status === 'incomplete') {
      const expired = await trx
        .updateTable('subscriptions')
        .set({ status: 'incomplete_expired', next_action: null, next_action_at: null, updated_at: now })
        .where('id', '=', sub.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await insertSubscriptionEvent(trx, expired, 'subscription.incomplete_expired', deps.checkoutBaseUrl, now);
    } else {
      await cancelNow(trx, sub, { reason: 'payment_failed', comment: null, at: now, checkoutBaseUrl: deps.checkoutBaseUrl });
    }
    return true;
  });
}
