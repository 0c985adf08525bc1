import type { Selectable, Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database, Mode, SubscriptionInterval, SubscriptionStatusValue, SubscriptionsTable } from '../../db/schema.js';
import type { Clock } from '../../domain/clock.js';
import {
  SUBSCRIPTION_STATUS_EVENT,
  subscriptionEventObject,
  type OperatorHoldInput,
  type SubscriptionEventType,
} from '../../domain/events/subscription.js';
import { cursorPage, type CursorListResult, type CursorPageRequest } from '../core/cursor-page.js';
import { insertOutboxEvent } from '../core/outbox.js';

// The ledger of subscriptions: creation, lookups, lists, cancellation. Life-cycle transitions driven by the
// scheduler and by authorizations live in subscriptions-lifecycle.ts. Every change writes its event in the same
// transaction; status changes are guarded by `WHERE status IN (allowed)` (SUBSCRIPTION_TRANSITIONS).

export type SubscriptionRow = Selectable<SubscriptionsTable>;

/** Allowed source states of each subscription transition (ARCHITECTURE.md: transitions are data). */
export const SUBSCRIPTION_TRANSITIONS = {
  /** A page selection and the authorization it waits for: a first one, or a new one for a live subscription. */
  authorize: ['incomplete', 'trialing', 'active', 'past_due'],
  authorizeToTrial: ['incomplete'],
  authorizeToCharge: ['incomplete'],
  activate: ['incomplete', 'trialing', 'active', 'past_due'],
  pastDue: ['incomplete', 'trialing', 'active', 'past_due'],
  cancel: ['incomplete', 'trialing', 'active', 'past_due'],
  expireIncomplete: ['incomplete'],
} as const satisfies Record<string, readonly SubscriptionStatusValue[]>;

export const SUBSCRIPTION_STATUSES: readonly SubscriptionStatusValue[] = [
  'incomplete',
  'incomplete_expired',
  'trialing',
  'active',
  'past_due',
  'canceled',
];
export const CANCELLATION_REASONS = ['customer_request', 'payment_failed', 'fraud', 'other'] as const;
export type CancellationReason = (typeof CANCELLATION_REASONS)[number];

export interface NewSubscription {
  id: string;
  merchantId: string;
  mode: Mode;
  customer: string;
  customerEmail: string | null;
  customerPhone: string | null;
  customerName: string | null;
  currency: string;
  description: string | null;
  priceId: string;
  product: string;
  unitAmountMinor: bigint;
  interval: SubscriptionInterval;
  quantity: number;
  itemMetadata: Record<string, string>;
  successUrl: string | null;
  cancelUrl: string | null;
  trialEnd: Date | null;
  billingCycleAnchor: Date | null;
  cancelAt: Date | null;
  iterations: number | null;
  metadata: Record<string, string>;
}

/** Where the customer authorizes a subscription: a page of this service (src/subscriptions/page/). */
export function subscriptionCheckoutUrl(checkoutBaseUrl: string, id: string): string {
  return `${new URL(checkoutBaseUrl).origin}/subscribe/${id}`;
}

export async function insertSubscription(
  trx: Transaction<Database>,
  s: NewSubscription,
  o: { clock: Clock; incompleteExpiryMs: number; checkoutBaseUrl: string },
): Promise<SubscriptionRow> {
  const now = o.clock.now();
  const row = await trx
    .insertInto('subscriptions')
    .values({
      id: s.id,
      merchant_id: s.merchantId,
      mode: s.mode,
      customer: s.customer,
      customer_email: s.customerEmail,
      customer_phone: s.customerPhone,
      customer_name: s.customerName,
      currency: s.currency,
      description: s.description,
      price_id: s.priceId,
      product: s.product,
      unit_amount_minor: s.unitAmountMinor,
      interval: s.interval,
      quantity: s.quantity,
      item_metadata: JSON.stringify(s.itemMetadata),
      success_url: s.successUrl,
      cancel_url: s.cancelUrl,
      trial_end: s.trialEnd,
      billing_cycle_anchor: s.billingCycleAnchor,
      cancel_at: s.cancelAt,
      iterations: s.iterations,
      metadata: JSON.stringify(s.metadata),
      next_action: 'expire',
      next_action_at: new Date(now.getTime() + o.incompleteExpiryMs),
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await insertSubscriptionEvent(trx, row, 'subscription.created', o.checkoutBaseUrl, now);
  return row;
}

export async function insertSubscriptionEvent(
  trx: Transaction<Database>,
  s: SubscriptionRow,
  type: SubscriptionEventType,
  checkoutBaseUrl: string,
  at: Date,
): Promise<void> {
  await insertOutboxEvent(trx, {
    merchantId: s.merchant_id,
    mode: s.mode,
    type,
    aggregateId: s.id,
    createdAt: at,
    object: subscriptionEventObject({
      subscriptionId: s.id,
      customerId: s.customer,
      status: s.status,
      cancelAtPeriodEnd: s.cancel_at_period_end,
      currentPeriodStart: s.current_period_start,
      currentPeriodEnd: s.current_period_end,
      checkoutUrl: s.status === 'incomplete' ? subscriptionCheckoutUrl(checkoutBaseUrl, s.id) : null,
      canceledAt: s.canceled_at,
      items: [
        {
          priceId: s.price_id,
          productId: s.product,
          quantity: s.quantity,
          currency: s.currency,
          interval: s.interval,
          intervalCount: 1,
          amountMinor: s.unit_amount_minor,
        },
      ],
      operatorHold: subscriptionHold(s),
    }),
  });
}

/** The operator hold of a subscription row, or null (docs/subscriptions.md "Operator hold"). */
export function subscriptionHold(s: SubscriptionRow): OperatorHoldInput | null {
  return s.hold_reason !== null && s.held_at !== null ? { reason: s.hold_reason, transactionHash: s.hold_tx_hash, since: s.held_at } : null;
}

/** The event of entering `status`, or subscription.updated when the status did not change. */
export function statusEventType(before: SubscriptionStatusValue, after: SubscriptionStatusValue): SubscriptionEventType {
  return before === after ? 'subscription.updated' : (SUBSCRIPTION_STATUS_EVENT[after] ?? 'subscription.updated');
}

export async function findSubscription(db: Db, merchantId: string, mode: Mode, id: string): Promise<SubscriptionRow | undefined> {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .where('mode', '=', mode)
    .executeTakeFirst();
}

/** Newest first by (created_at, id): the Stripe-style cursor rules of cursor-page.ts. */
export async function listSubscriptions(
  db: Db,
  merchantId: string,
  mode: Mode,
  o: CursorPageRequest & { customer?: string; status?: SubscriptionStatusValue },
): Promise<CursorListResult<SubscriptionRow>> {
  return cursorPage(db, 'subscriptions', { merchantId, mode }, o, (q) => {
    let f = q;
    if (o.customer !== undefined) f = f.where('customer', '=', o.customer);
    if (o.status !== undefined) f = f.where('status', '=', o.status);
    return f;
  });
}

export type CancelSubscriptionResult =
  | { kind: 'canceled' | 'scheduled'; subscription: SubscriptionRow }
  | { kind: 'not_cancelable'; subscription: SubscriptionRow }
  | { kind: 'no_period'; subscription: SubscriptionRow };

/**
 * Cancel now (status canceled, canceled_at now, cancel_at null, subscription.canceled), or at the end of the current
 * period (status unchanged, cancel_at = current_period_end, canceled_at null, subscription.updated); the scheduler
 * cancels it then.
 */
export async function cancelSubscription(
  db: Db,
  id: string,
  o: {
    atPeriodEnd: boolean;
    reason: CancellationReason | null;
    comment: string | null;
    clock: Clock;
    checkoutBaseUrl: string;
    /** Runs in the cancel's transaction once it changed the subscription (the API stores its Idempotency-Key answer). */
    onChanged?: (trx: Transaction<Database>, subscription: SubscriptionRow) => Promise<void>;
  },
): Promise<CancelSubscriptionResult> {
  return db.transaction().execute(async (trx) => {
    const current = await trx.selectFrom('subscriptions').selectAll().where('id', '=', id).forUpdate().executeTakeFirstOrThrow();
    if (!(SUBSCRIPTION_TRANSITIONS.cancel as readonly string[]).includes(current.status))
      return { kind: 'not_cancelable', subscription: current };
    const now = o.clock.now();
    if (o.atPeriodEnd) {
      if (!current.current_period_end) return { kind: 'no_period', subscription: current };
      const updated = await trx
        .updateTable('subscriptions')
        .set({
          cancel_at_period_end: true,
          cancel_at: current.current_period_end,
          cancellation_reason: o.reason,
          cancellation_comment: o.comment,
          updated_at: now,
          // A scheduled renewal at period end becomes the cancellation; a dunning retry stays as it is.
          ...(current.next_action === 'renew' ? { next_action: 'cancel' as const } : {}),
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await insertSubscriptionEvent(trx, updated, 'subscription.updated', o.checkoutBaseUrl, now);
      await o.onChanged?.(trx, updated);
      return { kind: 'scheduled', subscription: updated };
    }
    const canceled = await cancelNow(trx, current, { reason: o.reason, comment: o.comment, at: now, checkoutBaseUrl: o.checkoutBaseUrl });
    await o.onChanged?.(trx, canceled);
    return { kind: 'canceled', subscription: canceled };
  });
}

/** → canceled in the caller's transaction (row already locked): open invoices are voided, nothing is due any more. */
export async function cancelNow(
  trx: Transaction<Database>,
  current: SubscriptionRow,
  o: { reason: CancellationReason | null; comment: string | null; at: Date; checkoutBaseUrl: string },
): Promise<SubscriptionRow> {
  const canceled = await trx
    .updateTable('subscriptions')
    .set({
      status: 'canceled',
      canceled_at: o.at,
      cancel_at: null,
      cancellation_reason: o.reason ?? current.cancellation_reason,
      cancellation_comment: o.comment ?? current.cancellation_comment,
      next_action: null,
      next_action_at: null,
      // A canceled subscription waits for nobody: its operator hold (if any) ends with it.
      hold_reason: null,
      hold_charge_id: null,
      hold_tx_hash: null,
      held_at: null,
      updated_at: o.at,
    })
    .where('id', '=', current.id)
    .where('status', 'in', SUBSCRIPTION_TRANSITIONS.cancel)
    .returningAll()
    .executeTakeFirstOrThrow();
  // An unpaid invoice of a canceled subscription is never collected. One with a charge in flight stays open: the
  // charge's outcome settles it.
  await trx
    .updateTable('invoices')
    .set({ status: 'void' })
    .where('subscription_id', '=', current.id)
    .where('status', '=', 'open')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('subscription_charges')
            .select('id')
            .whereRef('subscription_charges.invoice_id', '=', 'invoices.id')
            .where('state', 'in', ['pending', 'signed', 'broadcast']),
        ),
      ),
    )
    .execute();
  await insertSubscriptionEvent(trx, canceled, 'subscription.canceled', o.checkoutBaseUrl, o.at);
  return canceled;
}
