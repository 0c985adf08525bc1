import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Mode, SubscriptionHoldReason } from '../../db/schema.js';
import type { Clock } from '../../domain/clock.js';
import { SUBSCRIPTION_TRANSITIONS, cancelNow, insertSubscriptionEvent, type SubscriptionRow } from './subscriptions.js';
import { lockChargeInFlight } from './charges.js';

// Operator hold of a subscription (issue 34 item 6; docs/subscriptions.md "Operator hold"). A charge whose tokens left
// the customer for another address than the settlement address (`wrong_recipient`) is not a customer short of funds:
// dunning would take the customer's money again. The charge fails, the subscription keeps its (spec) status, nothing
// is charged (no retry, no renewal) and the hold is shown as the extension `operator_hold` with subscription.updated,
// until an operator resolves it: retry the open invoice (the cause fixed), or cancel.

export interface HoldDeps {
  db: Db;
  clock: Clock;
  checkoutBaseUrl: string;
}

/**
 * signed|broadcast → failed for `reason`, and the subscription held: no invoice.payment_failed, no past_due, no next
 * action. False when the charge is no longer in flight (another worker settled it).
 */
export async function chargeHeld(
  deps: HoldDeps,
  chargeId: bigint,
  hold: { reason: SubscriptionHoldReason; failureText: string; txHash: string },
): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    const charge = await lockChargeInFlight(trx, chargeId);
    if (!charge) return false;
    const now = deps.clock.now();
    await trx
      .updateTable('subscription_charges')
      .set({ state: 'failed', failure_reason: hold.failureText.slice(0, 500), settled_at: sql`now()` })
      .where('id', '=', charge.id)
      .execute();
    // The invoice stays open and unpaid: whether it was paid is for the operator to establish.
    await trx.updateTable('invoices').set({ attempt_count: sql`attempt_count + 1` }).where('id', '=', charge.invoice_id).execute();
    const held = await trx
      .updateTable('subscriptions')
      .set({
        hold_reason: hold.reason,
        hold_charge_id: charge.id,
        hold_tx_hash: hold.txHash,
        held_at: now,
        next_action: null,
        next_action_at: null,
        updated_at: now,
      })
      .where('id', '=', charge.subscription_id)
      .where('status', 'in', SUBSCRIPTION_TRANSITIONS.pastDue)
      .returningAll()
      .executeTakeFirst();
    if (held) await insertSubscriptionEvent(trx, held, 'subscription.updated', deps.checkoutBaseUrl, now);
    return true;
  });
}

export interface HeldSubscription {
  id: string;
  merchantId: string;
  mode: Mode;
  status: string;
  reason: string;
  chargeId: string | null;
  txHash: string | null;
  heldAt: Date;
  latestInvoiceId: string | null;
}

/** Every held subscription, oldest hold first (the operator's work list). */
export async function heldSubscriptions(db: Db): Promise<HeldSubscription[]> {
  const rows = await db.selectFrom('subscriptions').selectAll().where('hold_reason', 'is not', null).orderBy('held_at').execute();
  return rows.map((r) => ({
    id: r.id,
    merchantId: r.merchant_id,
    mode: r.mode,
    status: r.status,
    reason: r.hold_reason!,
    chargeId: r.hold_charge_id === null ? null : String(r.hold_charge_id),
    txHash: r.hold_tx_hash,
    heldAt: r.held_at!,
    latestInvoiceId: r.latest_invoice_id,
  }));
}

export type HoldResolution = 'retry' | 'cancel';
export type ResolveResult =
  | { kind: 'resolved'; subscription: SubscriptionRow }
  | { kind: 'not_found' }
  | { kind: 'not_held'; status: string };

/**
 * Ends a hold. `retry`: the open invoice is charged again at the next scheduler tick (the operator fixed the cause,
 * e.g. the settlement address); `cancel`: the subscription is canceled now (reason `other`), its open invoice void.
 * Either way subscription.updated (or subscription.canceled) tells the merchant the hold is over.
 */
export async function resolveSubscriptionHold(deps: HoldDeps, subscriptionId: string, resolution: HoldResolution): Promise<ResolveResult> {
  return deps.db.transaction().execute(async (trx) => {
    const sub = await trx.selectFrom('subscriptions').selectAll().where('id', '=', subscriptionId).forUpdate().executeTakeFirst();
    if (!sub) return { kind: 'not_found' };
    if (sub.hold_reason === null) return { kind: 'not_held', status: sub.status };
    const now = deps.clock.now();
    if (resolution === 'cancel') {
      const canceled = await cancelNow(trx, sub, {
        reason: 'other',
        comment: `operator: ${sub.hold_reason}`,
        at: now,
        checkoutBaseUrl: deps.checkoutBaseUrl,
      });
      return { kind: 'resolved', subscription: canceled };
    }
    const released = await trx
      .updateTable('subscriptions')
      .set({
        hold_reason: null,
        hold_charge_id: null,
        hold_tx_hash: null,
        held_at: null,
        next_action: 'retry',
        next_action_at: now,
        updated_at: now,
      })
      .where('id', '=', sub.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await insertSubscriptionEvent(trx, released, 'subscription.updated', deps.checkoutBaseUrl, now);
    return { kind: 'resolved', subscription: released };
  });
}
