import { jsonInt, unixSeconds } from './json-int.js';

// data.object of subscription events (interface.md, Subscription events). Optional fields are omitted, not null.

export type SubscriptionStatus = 'incomplete' | 'incomplete_expired' | 'trialing' | 'active' | 'past_due' | 'canceled';
export type SubscriptionEventType =
  | 'subscription.created'
  | 'subscription.trialing'
  | 'subscription.active'
  | 'subscription.past_due'
  | 'subscription.canceled'
  | 'subscription.updated'
  | 'subscription.incomplete_expired';

export const SUBSCRIPTION_EVENT_TYPES: readonly SubscriptionEventType[] = [
  'subscription.created',
  'subscription.trialing',
  'subscription.active',
  'subscription.past_due',
  'subscription.canceled',
  'subscription.updated',
  'subscription.incomplete_expired',
];

/** The event announcing that a subscription entered `status` (created and updated have their own triggers). */
export const SUBSCRIPTION_STATUS_EVENT: Partial<Record<SubscriptionStatus, SubscriptionEventType>> = {
  trialing: 'subscription.trialing',
  active: 'subscription.active',
  past_due: 'subscription.past_due',
  canceled: 'subscription.canceled',
  incomplete_expired: 'subscription.incomplete_expired',
};

export interface SubscriptionItemInput {
  priceId: string;
  productId: string;
  quantity: number;
  currency: string;
  interval: 'day' | 'week' | 'month' | 'year';
  intervalCount: number;
  amountMinor: bigint;
}

export interface SubscriptionEventInput {
  subscriptionId: string;
  customerId: string;
  status: SubscriptionStatus;
  cancelAtPeriodEnd: boolean;
  currentPeriodStart?: Date | null;
  currentPeriodEnd?: Date | null;
  checkoutUrl?: string | null;
  canceledAt?: Date | null;
  items: SubscriptionItemInput[];
  /** Extension: the subscription waits for an operator (docs/subscriptions.md "Operator hold"); omitted when not held. */
  operatorHold?: OperatorHoldInput | null;
}

export interface OperatorHoldInput {
  reason: string;
  transactionHash: string | null;
  since: Date;
}

/** The extension `operator_hold` as the API and the events show it. */
export function operatorHoldObject(h: OperatorHoldInput): Record<string, unknown> {
  return { reason: h.reason, charge_transaction: h.transactionHash, since: unixSeconds(h.since) };
}

export function subscriptionEventObject(s: SubscriptionEventInput): Record<string, unknown> {
  return {
    subscription_id: s.subscriptionId,
    customer_id: s.customerId,
    status: s.status,
    cancel_at_period_end: s.cancelAtPeriodEnd,
    ...(s.currentPeriodStart ? { current_period_start: unixSeconds(s.currentPeriodStart) } : {}),
    ...(s.currentPeriodEnd ? { current_period_end: unixSeconds(s.currentPeriodEnd) } : {}),
    ...(s.checkoutUrl ? { checkout_url: s.checkoutUrl } : {}),
    ...(s.canceledAt ? { canceled_at: unixSeconds(s.canceledAt) } : {}),
    source: 'api',
    items: s.items.map((i) => ({
      price_id: i.priceId,
      quantity: i.quantity,
      currency: i.currency,
      product_id: i.productId,
      interval: i.interval,
      interval_count: i.intervalCount,
      amount: jsonInt(i.amountMinor, 'items.amount'),
    })),
    ...(s.operatorHold ? { operator_hold: operatorHoldObject(s.operatorHold) } : {}),
  };
}
