import { z } from 'zod';
import { subscriptionSchema } from '../../api/serializers/subscription.js';

// The console's subscriptions area: GET /api/subscriptions, GET /api/subscriptions/:id, POST
// /api/subscriptions/:id/cancel, operator POST /api/subscriptions/:id/resolve {action: 'retry'|'cancel'}. The shapes
// the routes answer with and the UI builds against (types only). Money: decimal strings with their currency.

const iso = z.string().meta({ description: 'ISO 8601 time.' });
const decimal = z.string().regex(/^\d+(\.\d+)?$/);

export const CONSOLE_SUBSCRIPTION_STATUSES = ['incomplete', 'incomplete_expired', 'trialing', 'active', 'past_due', 'canceled'] as const;

export const holdSchema = z.strictObject({
  reason: z.string(),
  charge_id: z.string().nullable(),
  transaction_hash: z.string().nullable(),
  since: iso,
});
export type SubscriptionHoldView = z.infer<typeof holdSchema>;

/** One row of GET /api/subscriptions?status&merchant_id&mode&held&cursor&limit (newest first). */
export const subscriptionRowSchema = z.strictObject({
  id: z.string(),
  merchant_id: z.string(),
  mode: z.enum(['test', 'live']),
  customer: z.string(),
  customer_email: z.string().nullable(),
  status: z.enum(CONSOLE_SUBSCRIPTION_STATUSES),
  product: z.string(),
  /** unit amount × quantity per period, e.g. "9.99", in `currency`. */
  amount: decimal,
  currency: z.string(),
  interval: z.enum(['day', 'week', 'month', 'year']),
  current_period_end: iso.nullable(),
  /** What the scheduler does next and when (renew, retry = dunning, cancel, expire). */
  next_action: z.enum(['expire', 'renew', 'retry', 'cancel']).nullable(),
  next_action_at: iso.nullable(),
  cancel_at: iso.nullable(),
  hold: holdSchema.nullable(),
  created_at: iso,
});
export type SubscriptionRowView = z.infer<typeof subscriptionRowSchema>;

export const subscriptionListSchema = z.strictObject({ data: z.array(subscriptionRowSchema), next_cursor: z.string().nullable() });
export type SubscriptionList = z.infer<typeof subscriptionListSchema>;

export const invoiceViewSchema = z.strictObject({
  id: z.string(),
  period_number: z.number().int(),
  status: z.enum(['draft', 'open', 'paid', 'void', 'uncollectible']),
  payment_status: z.enum(['unpaid', 'paid', 'failed']),
  billing_reason: z.string(),
  amount_due: decimal,
  amount_paid: decimal,
  currency: z.string(),
  period_start: iso,
  period_end: iso,
  due_date: iso,
  paid_at: iso.nullable(),
  /** Dunning: charge attempts made for this invoice and when the first one failed. */
  attempt_count: z.number().int(),
  first_failed_at: iso.nullable(),
  created_at: iso,
});
export type InvoiceView = z.infer<typeof invoiceViewSchema>;

export const chargeViewSchema = z.strictObject({
  id: z.string(),
  invoice_id: z.string(),
  network: z.string(),
  token: z.string(),
  /** Token units as a decimal string; null when this deployment does not know the token's decimals. */
  amount: decimal.nullable(),
  amount_base: z.string().regex(/^\d+$/),
  state: z.enum(['pending', 'signed', 'broadcast', 'succeeded', 'failed']),
  failure_reason: z.string().nullable(),
  transaction_hash: z.string().nullable(),
  explorer_url: z.string().nullable(),
  created_at: iso,
  settled_at: iso.nullable(),
});
export type ChargeView = z.infer<typeof chargeViewSchema>;

export const paymentMethodViewSchema = z.strictObject({
  id: z.string(),
  status: z.enum(['active', 'revoked']),
  network: z.string(),
  token: z.string(),
  owner_address: z.string(),
  spender_address: z.string(),
  /** The approved allowance in token units; null when the token's decimals are unknown here. */
  allowance: decimal.nullable(),
  allowance_base: z.string(),
  approval_transaction_hash: z.string(),
  created_at: iso,
  revoked_at: iso.nullable(),
});
export type PaymentMethodView = z.infer<typeof paymentMethodViewSchema>;

/** GET /api/subscriptions/:id. */
export const subscriptionDetailSchema = z.strictObject({
  /** The public API's Subscription object (src/api/serializers/subscription.ts). */
  subscription: subscriptionSchema,
  merchant_id: z.string(),
  mode: z.enum(['test', 'live']),
  next_action: z.enum(['expire', 'renew', 'retry', 'cancel']).nullable(),
  next_action_at: iso.nullable(),
  /** Newest first. */
  invoices: z.array(invoiceViewSchema),
  /** Newest first. */
  charges: z.array(chargeViewSchema),
  payment_methods: z.array(paymentMethodViewSchema),
  hold: holdSchema.nullable(),
});
export type SubscriptionDetail = z.infer<typeof subscriptionDetailSchema>;

/**
 * POST /api/subscriptions/:id/cancel {at_period_end?: boolean, reason?, comment?}: the API's cancel rules
 * (400 subscription_not_cancelable). Answers the detail. POST /api/subscriptions/:id/resolve {action} answers the
 * detail too (400 subscription_not_held when no hold).
 */
export const SUBSCRIPTION_RESOLVE_ACTIONS = ['retry', 'cancel'] as const;
