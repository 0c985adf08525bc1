import { z } from 'zod';

// The console's webhooks area: GET|PUT /api/webhooks/endpoint, POST /api/webhooks/rotate-secret,
// GET /api/webhooks/deliveries[/:event_id], POST /api/webhooks/deliveries/:event_id/resend,
// POST /api/webhooks/resend-failed. The shapes the routes answer with and the UI builds against (types only).
// A webhook secret appears once, in the rotation's answer; elsewhere only its first characters.

const iso = z.string().meta({ description: 'ISO 8601 time.' });

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'skipped'] as const;
export const ATTEMPT_OUTCOMES = ['delivered', 'retrying', 'failed', 'skipped'] as const;

/** GET /api/webhooks/endpoint?merchant_id= (merchant_id required for an operator). */
export const webhookEndpointSchema = z.strictObject({
  merchant_id: z.string(),
  url: z.string().nullable(),
  /** The current secret's first characters (`whsec_AbCd`), never the secret. */
  secret_prefix: z.string(),
  /** Until when the previous secret still signs beside the current one (after a rotation with overlap); else null. */
  previous_secret_expires_at: iso.nullable(),
});
export type WebhookEndpoint = z.infer<typeof webhookEndpointSchema>;

/** PUT /api/webhooks/endpoint {url: string|null, test_only?, merchant_id? (operator)}: the CLI's `webhooks set-url`. */
export const webhookEndpointSetSchema = z.strictObject({
  merchant_id: z.string(),
  url: z.string().nullable(),
  /** Whether live-mode events may be delivered to this URL (false for a URL accepted for test-mode events only). */
  live_deliverable: z.boolean(),
  live_refusal: z.string().optional(),
});
export type WebhookEndpointSet = z.infer<typeof webhookEndpointSetSchema>;

/** POST /api/webhooks/rotate-secret {overlap_hours?, merchant_id? (operator)}: the new secret, shown this once. */
export const webhookSecretRotationSchema = z.strictObject({
  merchant_id: z.string(),
  secret: z.string(),
  previous_secret_expires_at: iso.nullable(),
});
export type WebhookSecretRotation = z.infer<typeof webhookSecretRotationSchema>;

/** One row of GET /api/webhooks/deliveries (newest first; filters status, type, merchant_id, since). */
export const deliveryRowSchema = z.strictObject({
  event_id: z.string(),
  merchant_id: z.string(),
  mode: z.enum(['test', 'live']),
  type: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number().int(),
  /** The last HTTP attempt's latency; null before any. */
  latency_ms: z.number().int().nullable(),
  last_response_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  /** The first 200 characters of the last attempt's response body, when stored. */
  body_excerpt: z.string().nullable(),
  created_at: iso,
  last_attempt_at: iso.nullable(),
  delivered_at: iso.nullable(),
  failed_at: iso.nullable(),
});
export type DeliveryRow = z.infer<typeof deliveryRowSchema>;

export const deliveryListSchema = z.strictObject({ data: z.array(deliveryRowSchema), next_cursor: z.string().nullable() });
export type DeliveryList = z.infer<typeof deliveryListSchema>;

export const deliveryAttemptSchema = z.strictObject({
  id: z.string(),
  generation: z.number().int(),
  /** 1-based across generations; null when no HTTP request was made (e.g. skipped). */
  attempt: z.number().int().nullable(),
  url: z.string().nullable(),
  status_code: z.number().int().nullable(),
  error: z.string().nullable(),
  latency_ms: z.number().int().nullable(),
  response_excerpt: z.string().nullable(),
  outcome: z.enum(ATTEMPT_OUTCOMES),
  created_at: iso,
});
export type DeliveryAttempt = z.infer<typeof deliveryAttemptSchema>;

/** GET /api/webhooks/deliveries/:event_id: the delivery, the exact body it sends, and every attempt (oldest first). */
export const deliveryDetailSchema = z.strictObject({
  delivery: deliveryRowSchema,
  generation: z.number().int(),
  next_attempt_at: iso.nullable(),
  /** The event's JSON body, exactly as every attempt sends it. */
  body: z.string(),
  attempts: z.array(deliveryAttemptSchema),
});
export type DeliveryDetail = z.infer<typeof deliveryDetailSchema>;

export const RESEND_RESULTS = ['resent', 'already_pending', 'not_yet_relayed', 'unknown_event'] as const;

/** POST /api/webhooks/deliveries/:event_id/resend (404 for an unknown event). */
export const resendResultSchema = z.strictObject({
  event_id: z.string(),
  result: z.enum(RESEND_RESULTS),
  generation: z.number().int().optional(),
  job_id: z.string().optional(),
});
export type ResendResult = z.infer<typeof resendResultSchema>;

/** POST /api/webhooks/resend-failed {since, merchant_id?, include_skipped?}. */
export const resendFailedSchema = z.strictObject({
  resent: z.number().int(),
  events: z.array(resendResultSchema),
});
export type ResendFailed = z.infer<typeof resendFailedSchema>;
