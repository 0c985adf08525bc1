import { z } from 'zod';
import { sessionSchema } from '../../api/serializers/session.js';
import { consoleRefundSchema } from './refunds.js';

// The console's payments area (GET /api/payments, GET /api/payments/:id, POST /api/payments/:id/refund|cancel):
// the shapes the routes answer with and the UI builds against. Money: decimal strings; times: ISO 8601 strings.

const iso = z.string().meta({ description: 'ISO 8601 time.' });
const decimal = z.string().regex(/^\d+(\.\d+)?$/);

export const PAYMENT_STATUSES = ['open', 'paid', 'expired', 'canceled'] as const;
export const PAYMENT_SORTS = ['created_at', 'amount'] as const;

/** One row of GET /api/payments. */
export const paymentRowSchema = z.strictObject({
  id: z.string(),
  merchant_id: z.string(),
  mode: z.enum(['test', 'live']),
  order_id: z.string(),
  status: z.enum(PAYMENT_STATUSES),
  /** The session's amount in its currency, e.g. "12.50". */
  amount: decimal,
  /** The merchant currency, uppercase (e.g. "USD", "USDT"). */
  currency: z.string(),
  network: z.string().nullable(),
  token: z.string().nullable(),
  deposit_address: z.string().nullable(),
  /** What the session received, in token units (decimal); null while no network and token are chosen, or when this deployment does not know the token's decimals. */
  received: decimal.nullable(),
  created_at: iso,
  paid_at: iso.nullable(),
  expires_at: iso,
});

export const paymentListSchema = z.strictObject({ data: z.array(paymentRowSchema), next_cursor: z.string().nullable() });

export const TIMELINE_KINDS = [
  'created',
  'quoted',
  'network_selected',
  'deposit_seen',
  'deposit_confirmed',
  'paid',
  'expired',
  'canceled',
  'refund_created',
  'refund_succeeded',
  'refund_failed',
] as const;

export const timelineEntrySchema = z.strictObject({ at: iso, kind: z.enum(TIMELINE_KINDS), detail: z.string() });

export const paymentDepositSchema = z.strictObject({
  id: z.string(),
  network: z.string(),
  token: z.string(),
  tx_hash: z.string(),
  from_address: z.string().nullable(),
  /** Token units, decimal; base units when the token's decimals are not known here (then `amount_base` only). */
  amount: decimal.nullable(),
  amount_base: z.string().regex(/^\d+$/),
  status: z.enum(['provisional', 'confirmed', 'orphaned']),
  /** Confirmations when the chain's tip is known; null otherwise. */
  confirmations: z.number().int().nullable(),
  explorer_url: z.string().nullable(),
  block_number: z.string().regex(/^\d+$/),
  at: iso,
  /** A look-alike of the token (USDbC, USDC.e): unmatched `unsupported_token`, never credited; `note` says what it is. */
  unsupported: z.strictObject({ note: z.string() }).nullable(),
});

export const webhookDeliveryBriefSchema = z.strictObject({
  event_id: z.string(),
  type: z.string(),
  status: z.enum(['pending', 'delivered', 'failed', 'skipped']),
  attempts: z.number().int(),
  last_response_code: z.number().int().nullable(),
  last_attempt_at: iso.nullable(),
});

/** GET /api/payments/:id. */
export const paymentDetailSchema = z.strictObject({
  session: sessionSchema.meta({ description: "The public API's PaymentSession object." }),
  merchant_id: z.string(),
  mode: z.enum(['test', 'live']),
  timeline: z.array(timelineEntrySchema),
  deposits: z.array(paymentDepositSchema),
  webhook_deliveries: z.array(webhookDeliveryBriefSchema),
  refunds: z.array(consoleRefundSchema),
});

/** Body of POST /api/payments/:id/refund (amount in token units, default: what is left to refund). */
export const paymentRefundBodySchema = z.strictObject({
  amount: z.string().max(40).optional(),
  reason: z.enum(['requested_by_customer', 'duplicate', 'fraudulent', 'expired_uncaptured']).optional(),
  description: z.string().max(1000).optional(),
  /** The refund's own id, its idempotency key (send the same one when retrying a request); default a fresh one. */
  refund_id: z.string().min(1).max(255).optional(),
});

/** POST /api/payments/:id/refund answers the refund (201); POST /api/payments/:id/cancel answers the session. */
export const paymentRefundResultSchema = consoleRefundSchema;
export const paymentCancelResultSchema = z.strictObject({ session: sessionSchema });

export type PaymentRow = z.infer<typeof paymentRowSchema>;
export type PaymentList = z.infer<typeof paymentListSchema>;
export type TimelineEntry = z.infer<typeof timelineEntrySchema>;
export type PaymentDeposit = z.infer<typeof paymentDepositSchema>;
export type WebhookDeliveryBrief = z.infer<typeof webhookDeliveryBriefSchema>;
export type PaymentDetail = z.infer<typeof paymentDetailSchema>;
export type PaymentRefundBody = z.infer<typeof paymentRefundBodySchema>;
export type PaymentCancelResult = z.infer<typeof paymentCancelResultSchema>;
