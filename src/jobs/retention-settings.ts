import { z } from 'zod';

// RETENTION_* environment variables (docs/retention.md). `retentionEnvSchema` is shaped so that src/config.ts can
// spread its `.shape` into the service's schema; a bad value stops the start with a message naming the variable.

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** A retention period: a whole number min..max, or `0`/`off` for "keep forever" (null). */
const period = (unit: string, min: number, max: number, fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((s, ctx): number | null => {
      const v = s.trim().toLowerCase();
      if (v === 'off' || v === '0') return null;
      const n = Number(v);
      if (/^\d{1,7}$/.test(v) && n >= min && n <= max) return n;
      ctx.addIssue({ code: 'custom', message: `must be a whole number of ${unit} ${min}..${max}, or 0/off to keep forever` });
      return z.NEVER;
    });

export const retentionEnvSchema = z.object({
  RETENTION_WEBHOOK_EVENTS_DAYS: period('days', 1, 36_500, '90'),
  // At least a day: a client retries a request whose answer it lost within minutes or hours, never days later.
  RETENTION_IDEMPOTENCY_HOURS: period('hours', 24, 876_000, '168'),
  RETENTION_RECONCILE_RUNS_DAYS: period('days', 1, 36_500, '90'),
  RETENTION_CONSOLE_SESSIONS_DAYS: period('days', 1, 36_500, '30'),
  // 0: no scheduled run (the operator runs `retention run`).
  RETENTION_INTERVAL_MS: int(0, 86_400_000).default(3_600_000),
  RETENTION_BATCH_ROWS: int(100, 50_000).default(5000),
});

export type RetentionEnv = z.infer<typeof retentionEnvSchema>;

/** How long each class is kept, in milliseconds (null: forever), and how the pruning job runs. */
export interface RetentionSettings {
  webhookEventsMs: number | null;
  idempotencyMs: number | null;
  reconcileRunsMs: number | null;
  consoleSessionsMs: number | null;
  intervalMs: number;
  batchRows: number;
}

const DAY_MS = 86_400_000;
const ms = (n: number | null, unitMs: number): number | null => (n === null ? null : n * unitMs);

export function retentionSettingsFrom(c: RetentionEnv): RetentionSettings {
  return {
    webhookEventsMs: ms(c.RETENTION_WEBHOOK_EVENTS_DAYS, DAY_MS),
    idempotencyMs: ms(c.RETENTION_IDEMPOTENCY_HOURS, 3_600_000),
    reconcileRunsMs: ms(c.RETENTION_RECONCILE_RUNS_DAYS, DAY_MS),
    consoleSessionsMs: ms(c.RETENTION_CONSOLE_SESSIONS_DAYS, DAY_MS),
    intervalMs: c.RETENTION_INTERVAL_MS,
    batchRows: c.RETENTION_BATCH_ROWS,
  };
}
