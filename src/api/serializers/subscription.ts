import { z } from 'zod';
import type { InvoiceRow } from '../../ledger/subscriptions/invoices.js';
import type { PaymentMethodRow } from '../../ledger/subscriptions/payment-methods.js';
import type { SubscriptionStatusValue } from '../../db/schema.js';
import {
  CANCELLATION_REASONS,
  SUBSCRIPTION_STATUSES,
  subscriptionCheckoutUrl,
  subscriptionHold,
  type SubscriptionRow,
} from '../../ledger/subscriptions/subscriptions.js';
import { operatorHoldObject } from '../../domain/events/subscription.js';
import { jsonInt } from '../../domain/events/json-int.js';
import { unix } from './session.js';
import { INVOICE_STATUSES } from './invoice.js';
import { metadataOut, minorUnits, unixTime } from './schema-parts.js';

const SUBSCRIPTION_STATUS = z.enum(SUBSCRIPTION_STATUSES as [SubscriptionStatusValue, ...SubscriptionStatusValue[]]);
const cancellationDetails = z.strictObject({
  reason: z.enum(CANCELLATION_REASONS).nullable(),
  comment: z.string().nullable(),
});

/** The Subscription object serializeSubscription answers with (the OpenAPI document's `Subscription`). */
export const subscriptionSchema = z.strictObject({
  id: z.string(),
  object: z.literal('subscription'),
  customer: z.string(),
  store_id: z.string(),
  currency: z.string(),
  description: z.string().nullable(),
  status: SUBSCRIPTION_STATUS,
  items: z.array(
    z.strictObject({
      price_data: z.strictObject({
        price_id: z.string(),
        currency: z.string(),
        product: z.string(),
        unit_amount: minorUnits,
        recurring: z.strictObject({ interval: z.enum(['day', 'week', 'month', 'year']), interval_count: z.number().int().min(1) }),
      }),
      quantity: z.number().int().min(1),
      metadata: metadataOut,
    }),
  ),
  payment_method_id: z.string().nullable(),
  billing_cycle_anchor: unixTime.nullable(),
  current_period_start: unixTime.nullable(),
  current_period_end: unixTime.nullable(),
  latest_invoice: z.string().nullable(),
  checkout_url: z.string(),
  trial_end: unixTime.nullable(),
  cancel_at: unixTime.nullable(),
  cancel_at_period_end: z.boolean(),
  canceled_at: unixTime.nullable(),
  cancellation_details: cancellationDetails,
  iterations: z.number().int().nullable(),
  operator_hold: z
    .strictObject({
      reason: z.enum(['wrong_recipient']),
      charge_transaction: z.string().nullable(),
      since: unixTime,
    })
    .nullable()
    .meta({
      description:
        'Extension: null, or why no charge is made until an operator resolves the subscription (`subscriptions resolve`); the status keeps its value.',
    }),
  success_url: z.string().nullable(),
  cancel_url: z.string().nullable(),
  updated: unixTime,
  metadata: metadataOut,
  created: unixTime,
  latest_invoice_object: z
    .strictObject({
      id: z.string(),
      status: z.enum(INVOICE_STATUSES),
      amount_due: minorUnits,
      amount_paid: minorUnits,
      currency: z.string(),
    })
    .nullable()
    .optional()
    .meta({ description: 'With expand=latest_invoice.' }),
  payment_method_object: z
    .strictObject({ id: z.string(), type: z.string(), status: z.enum(['active', 'revoked']) })
    .nullable()
    .optional()
    .meta({ description: 'With expand=payment_method.' }),
  customer_object: z
    .strictObject({ id: z.string(), email: z.string().nullable(), name: z.string().nullable(), phone: z.string().nullable() })
    .optional()
    .meta({ description: 'With expand=customer.' }),
});

/** The answer of POST /subscriptions/{subscription_id}/cancel. */
export const subscriptionCancellationSchema = z.strictObject({
  id: z.string(),
  object: z.literal('subscription'),
  status: SUBSCRIPTION_STATUS,
  cancel_at: unixTime.nullable(),
  cancel_at_period_end: z.boolean(),
  canceled_at: unixTime.nullable(),
  current_period_end: unixTime.nullable(),
  cancellation_details: cancellationDetails,
  updated: unixTime,
});

// Subscription as the spec shapes it (interface.md: Subscription). Times are Unix seconds, null where not set yet.
export interface SubscriptionExpansions {
  latestInvoice?: InvoiceRow | null;
  paymentMethod?: PaymentMethodRow | null;
  customer?: boolean;
}

const ts = (d: Date | null): number | null => (d ? unix(d) : null);

function operatorHoldOut(s: SubscriptionRow): Record<string, unknown> | null {
  const hold = subscriptionHold(s);
  return hold ? operatorHoldObject(hold) : null;
}

export function serializeSubscription(
  s: SubscriptionRow,
  checkoutBaseUrl: string,
  x: SubscriptionExpansions = {},
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: s.id,
    object: 'subscription',
    customer: s.customer,
    store_id: s.merchant_id,
    currency: s.currency,
    description: s.description,
    status: s.status,
    items: [
      {
        price_data: {
          price_id: s.price_id,
          currency: s.currency,
          product: s.product,
          unit_amount: jsonInt(s.unit_amount_minor, 'unit_amount'),
          recurring: { interval: s.interval, interval_count: 1 },
        },
        quantity: s.quantity,
        metadata: s.item_metadata,
      },
    ],
    payment_method_id: s.payment_method_id,
    billing_cycle_anchor: ts(s.billing_cycle_anchor),
    current_period_start: ts(s.current_period_start),
    current_period_end: ts(s.current_period_end),
    latest_invoice: s.latest_invoice_id,
    checkout_url: subscriptionCheckoutUrl(checkoutBaseUrl, s.id),
    trial_end: ts(s.trial_end),
    cancel_at: ts(s.cancel_at),
    cancel_at_period_end: s.cancel_at_period_end,
    canceled_at: ts(s.canceled_at),
    cancellation_details: { reason: s.cancellation_reason, comment: s.cancellation_comment },
    iterations: s.iterations,
    // Extension (docs/subscriptions.md "Operator hold"): null, or why the subscription waits for an operator.
    operator_hold: operatorHoldOut(s),
    success_url: s.success_url,
    cancel_url: s.cancel_url,
    updated: unix(s.updated_at),
    metadata: s.metadata,
    created: unix(s.created_at),
  };
  if (x.latestInvoice !== undefined) {
    const i = x.latestInvoice;
    out.latest_invoice_object = i
      ? {
          id: i.id,
          status: i.status,
          amount_due: jsonInt(i.amount_due_minor, 'amount_due'),
          amount_paid: jsonInt(i.amount_paid_minor, 'amount_paid'),
          currency: i.currency,
        }
      : null;
  }
  if (x.paymentMethod !== undefined) {
    const p = x.paymentMethod;
    out.payment_method_object = p ? { id: p.id, type: p.type, status: p.status } : null;
  }
  if (x.customer) {
    out.customer_object = { id: s.customer, email: s.customer_email, name: s.customer_name, phone: s.customer_phone };
  }
  return out;
}

/** The cancel operation's answer (interface.md: Cancel subscription). */
export function serializeCancellation(s: SubscriptionRow): Record<string, unknown> {
  return {
    id: s.id,
    object: 'subscription',
    status: s.status,
    cancel_at: ts(s.cancel_at),
    cancel_at_period_end: s.cancel_at_period_end,
    canceled_at: ts(s.canceled_at),
    current_period_end: ts(s.current_period_end),
    cancellation_details: { reason: s.cancellation_reason, comment: s.cancellation_comment },
    updated: unix(s.updated_at),
  };
}
