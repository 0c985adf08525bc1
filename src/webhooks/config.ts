import { z } from 'zod';

// WEBHOOK_* environment variables (documented with defaults in docs/webhooks.md). `webhookEnvSchema` is shaped so
// that src/config.ts can spread its `.shape` into the service's schema; `loadWebhookConfig` works on its own too.

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const schedule = z
  .string()
  .regex(/^\s*\d+(\s*,\s*\d+)*\s*$/, 'must be a comma-separated list of milliseconds, e.g. 1000,2000,4000,8000,16000')
  .transform((s) => s.split(',').map((p) => Number(p.trim())))
  .pipe(z.array(z.number().int().min(0).max(86_400_000)).max(20));

export const webhookEnvSchema = z.object({
  WEBHOOK_RETRY_SCHEDULE_MS: schedule.default([1000, 2000, 4000, 8000, 16000]),
  WEBHOOK_RETRY_JITTER_RATIO: z.coerce.number().min(0).max(1).default(0.1),
  WEBHOOK_TIMEOUT_MS: int(100, 120_000).default(30_000),
  WEBHOOK_CONCURRENCY: int(1, 1000).default(50),
  WEBHOOK_PER_MERCHANT_CONCURRENCY: int(1, 1000).default(10),
  WEBHOOK_MERCHANT_DEFER_MS: int(10, 60_000).default(250),
  WEBHOOK_ALLOW_PRIVATE_TARGETS_IN_TEST: bool.default(true),
  WEBHOOK_SECRET_OVERLAP_HOURS: z.coerce
    .number()
    .min(0)
    .max(24 * 30)
    .default(24),
  WEBHOOK_RELAY_BATCH_SIZE: int(1, 5000).default(500),
  WEBHOOK_RELAY_POLL_MS: int(10, 60_000).default(1000),
  WEBHOOK_RECONCILE_INTERVAL_MS: int(100, 3_600_000).default(30_000),
  WEBHOOK_RECONCILE_GRACE_MS: int(100, 86_400_000).default(120_000),
  WEBHOOK_LOCK_DURATION_MS: int(1000, 600_000).default(60_000),
});

export type WebhookEnv = z.infer<typeof webhookEnvSchema>;

/** Options of startDeliveryWorker / startOutboxRelay that come from the environment. */
export interface WebhookSettings {
  retrySchedule: number[];
  jitterRatio: number;
  timeoutMs: number;
  concurrency: number;
  perMerchantConcurrency: number;
  merchantDeferMs: number;
  allowPrivateTargetsInTest: boolean;
  secretOverlapHours: number;
  relayBatchSize: number;
  relayPollMs: number;
  reconcileIntervalMs: number;
  reconcileGraceMs: number;
  lockDurationMs: number;
}

export class WebhookConfigError extends Error {}

export function toWebhookSettings(e: WebhookEnv): WebhookSettings {
  return {
    retrySchedule: e.WEBHOOK_RETRY_SCHEDULE_MS,
    jitterRatio: e.WEBHOOK_RETRY_JITTER_RATIO,
    timeoutMs: e.WEBHOOK_TIMEOUT_MS,
    concurrency: e.WEBHOOK_CONCURRENCY,
    perMerchantConcurrency: e.WEBHOOK_PER_MERCHANT_CONCURRENCY,
    merchantDeferMs: e.WEBHOOK_MERCHANT_DEFER_MS,
    allowPrivateTargetsInTest: e.WEBHOOK_ALLOW_PRIVATE_TARGETS_IN_TEST,
    secretOverlapHours: e.WEBHOOK_SECRET_OVERLAP_HOURS,
    relayBatchSize: e.WEBHOOK_RELAY_BATCH_SIZE,
    relayPollMs: e.WEBHOOK_RELAY_POLL_MS,
    reconcileIntervalMs: e.WEBHOOK_RECONCILE_INTERVAL_MS,
    reconcileGraceMs: e.WEBHOOK_RECONCILE_GRACE_MS,
    lockDurationMs: e.WEBHOOK_LOCK_DURATION_MS,
  };
}

/** Reads WEBHOOK_* from an environment record; unset or empty variables take their defaults. */
export function loadWebhookConfig(env: Record<string, string | undefined> = process.env): WebhookSettings {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([k, v]) => k.startsWith('WEBHOOK_') && v !== undefined && v !== ''));
  const parsed = webhookEnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${String(i.path[0] ?? '?')}: ${i.message}`);
    throw new WebhookConfigError(`Invalid webhook configuration:\n${lines.join('\n')}`);
  }
  return toWebhookSettings(parsed.data);
}

/** Accepts the service's parsed Config (with WEBHOOK_* keys, possibly absent) and fills defaults. */
export function webhookSettingsFrom(config: Partial<Record<string, unknown>>): WebhookSettings {
  const picked = Object.fromEntries(Object.entries(config).filter(([k, v]) => k.startsWith('WEBHOOK_') && v !== undefined && v !== ''));
  // Values already parsed by the service's schema arrive typed; re-render them as the environment would.
  const asEnv = Object.fromEntries(Object.entries(picked).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)]));
  return loadWebhookConfig(asEnv);
}
