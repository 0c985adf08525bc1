import { z } from 'zod';
import { PAYMENT_UNMATCHED_REASONS } from '../unmatched-reasons.js';

// Every event type the spec names, with the exact shape of its data.object. Strict: an unexpected field is an error,
// so a builder that drifts from the spec fails its test.

const int = z.number().int();
/**
 * What a session received (extension, session-received.ts): on payment.completed / payment.expired and on the
 * PaymentSession of GET and create responses (the API's OpenAPI document uses the same shape).
 */
export const sessionReceivedShape = {
  amount_received: z.string().nullable().optional(),
  amount_received_base: z.string().regex(/^\d+$/).optional(),
  received_currency: z.enum(['USDT', 'USDC']).nullable().optional(),
  overpaid_amount: z.string().optional(),
  overpaid_amount_base: z.string().regex(/^\d+$/).optional(),
  remaining_amount: z.string().optional(),
  remaining_amount_base: z.string().regex(/^\d+$/).optional(),
  payments: z
    .array(
      z.strictObject({
        id: z.string(),
        network: z.string(),
        token: z.string(),
        transaction_hash: z.string(),
        amount: z.string().nullable(),
        amount_base: z.string().regex(/^\d+$/),
        sender: z.string().nullable(),
        confirmed_at: int.nullable(),
        status: z.enum(['credited', 'unmatched']),
        unmatched_reason: z.enum(PAYMENT_UNMATCHED_REASONS).optional(),
      }),
    )
    .optional(),
};
const paymentObject = z.strictObject({
  amount: z.string().regex(/^(\d+\.\d+|\d+|)$/),
  status: z.enum(['completed', 'failed', 'expired', 'canceled']),
  currency: z.enum(['USDT', 'USDC', '']),
  exchange_rate: z.string(),
  order_id: z.string(),
  session_id: z.string(),
  source: z.literal('api'),
  // Extensions on payment.completed / payment.expired: what the session received (session-received.ts).
  ...sessionReceivedShape,
});
const refundObject = (status: 'completed' | 'failed') =>
  z.strictObject({
    session_id: z.string(),
    order_id: z.string(),
    refund_id: z.string(),
    refund_amount: int.nonnegative(),
    refund_currency: z.enum(['USDT', 'USDC']),
    status: z.literal(status),
    source: z.literal('api'),
    amount_delivered: int.nonnegative().optional(),
    external_refund_id: z.string().optional(),
    original_currency: z.string().optional(),
    deposit_id: z.string().optional(),
    transaction_hash: z.string().optional(),
  });
const subscriptionObject = z.strictObject({
  subscription_id: z.string(),
  customer_id: z.string(),
  status: z.enum(['incomplete', 'incomplete_expired', 'trialing', 'active', 'past_due', 'canceled']),
  cancel_at_period_end: z.boolean(),
  current_period_start: int.optional(),
  current_period_end: int.optional(),
  checkout_url: z.string().optional(),
  canceled_at: int.optional(),
  source: z.string(),
  items: z.array(
    z.strictObject({
      price_id: z.string(),
      quantity: int.positive(),
      currency: z.string(),
      product_id: z.string(),
      interval: z.enum(['day', 'week', 'month', 'year']),
      interval_count: int.positive(),
      amount: int.nonnegative(),
    }),
  ),
  operator_hold: z.strictObject({ reason: z.string(), charge_transaction: z.string().nullable(), since: int }).optional(),
});
const invoiceObject = (statuses: [string, ...string[]]) =>
  z.strictObject({
    invoice_id: z.string(),
    subscription_id: z.string(),
    customer_id: z.string(),
    amount_due: int.nonnegative(),
    amount_paid: int.nonnegative(),
    amount_remaining: int,
    currency: z.string(),
    status: z.enum(statuses),
    payment_status: z.enum(['unpaid', 'paid', 'failed']),
    billing_reason: z.string(),
    period_start: int,
    period_end: int,
    paid_at: int.optional(),
    source: z.string(),
  });

export const EVENT_OBJECT_SCHEMAS = {
  'payment.completed': paymentObject.extend({ status: z.literal('completed') }),
  'payment.failed': paymentObject.extend({ status: z.literal('failed') }),
  'payment.expired': paymentObject.extend({ status: z.literal('expired') }),
  'payment.cancelled': paymentObject.extend({ status: z.literal('canceled') }),
  'refund.succeeded': refundObject('completed'),
  'refund.failed': refundObject('failed'),
  'subscription.created': subscriptionObject,
  'subscription.trialing': subscriptionObject.extend({ status: z.literal('trialing') }),
  'subscription.active': subscriptionObject.extend({ status: z.literal('active') }),
  'subscription.past_due': subscriptionObject.extend({ status: z.literal('past_due') }),
  'subscription.canceled': subscriptionObject.extend({ status: z.literal('canceled') }),
  'subscription.updated': subscriptionObject,
  'subscription.incomplete_expired': subscriptionObject.extend({ status: z.literal('incomplete_expired') }),
  'invoice.created': invoiceObject(['open', 'draft']),
  'invoice.paid': invoiceObject(['paid']),
  'invoice.payment_failed': invoiceObject(['open']),
} as const;

export type WebhookEventType = keyof typeof EVENT_OBJECT_SCHEMAS;
export const WEBHOOK_EVENT_TYPES = Object.keys(EVENT_OBJECT_SCHEMAS) as WebhookEventType[];

export const eventEnvelopeSchema = z.strictObject({
  id: z.string().regex(/^evt_\d+$/),
  type: z.enum(WEBHOOK_EVENT_TYPES as [WebhookEventType, ...WebhookEventType[]]),
  created_at: int,
  data: z.strictObject({ object: z.record(z.string(), z.unknown()) }),
});

/** Checks an envelope and its data.object against the spec; answers the problems found (empty when valid). */
export function validateEventEnvelope(body: unknown): string[] {
  const env = eventEnvelopeSchema.safeParse(body);
  if (!env.success) return env.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  const obj = EVENT_OBJECT_SCHEMAS[env.data.type].safeParse(env.data.data.object);
  return obj.success ? [] : obj.error.issues.map((i) => `data.object.${i.path.join('.')}: ${i.message}`);
}
