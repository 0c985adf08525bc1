import { DAY_MS } from './subscription-periods.js';

// Life-cycle numbers (decisions.md: Subscriptions), overridable from the environment (see docs/subscriptions.md).
export interface SubscriptionSettings {
  /** Without an authorization for this long, an incomplete subscription becomes incomplete_expired. */
  incompleteExpiryMs: number;
  /** Retries of a failed invoice, as offsets from its first failure; after the last one fails: canceled. */
  retryOffsetsMs: number[];
  /** Periods the requested allowance covers when the subscription has no `iterations`. */
  allowancePeriods: number;
  /** How often the worker's subscription loop runs (approvals, due actions, charges in flight). */
  tickMs: number;
}

export const DEFAULT_SUBSCRIPTION_SETTINGS: SubscriptionSettings = {
  incompleteExpiryMs: 23 * 3600_000,
  retryOffsetsMs: [1 * DAY_MS, 3 * DAY_MS, 5 * DAY_MS],
  allowancePeriods: 12,
  tickMs: 2000,
};

export function subscriptionSettingsFromEnv(env: Record<string, string | undefined>): SubscriptionSettings {
  const s = { ...DEFAULT_SUBSCRIPTION_SETTINGS };
  const retry = env.SUBSCRIPTION_RETRY_DAYS;
  if (retry) {
    const days = retry.split(',').map((d) => Number(d.trim()));
    if (days.some((d) => !Number.isFinite(d) || d <= 0) || days.some((d, i) => i > 0 && d <= days[i - 1]!)) {
      throw new Error('SUBSCRIPTION_RETRY_DAYS must be increasing positive numbers of days, e.g. "1,3,5"');
    }
    s.retryOffsetsMs = days.map((d) => Math.round(d * DAY_MS));
  }
  const periods = env.SUBSCRIPTION_ALLOWANCE_PERIODS;
  if (periods) {
    const n = Number(periods);
    if (!Number.isInteger(n) || n < 1 || n > 1200) throw new Error('SUBSCRIPTION_ALLOWANCE_PERIODS must be an integer 1..1200');
    s.allowancePeriods = n;
  }
  const hours = env.SUBSCRIPTION_INCOMPLETE_EXPIRY_HOURS;
  if (hours) {
    const h = Number(hours);
    if (!Number.isFinite(h) || h <= 0) throw new Error('SUBSCRIPTION_INCOMPLETE_EXPIRY_HOURS must be a positive number');
    s.incompleteExpiryMs = Math.round(h * 3600_000);
  }
  const tick = env.SUBSCRIPTION_TICK_MS;
  if (tick) {
    const n = Number(tick);
    if (!Number.isInteger(n) || n < 50 || n > 600_000) throw new Error('SUBSCRIPTION_TICK_MS must be an integer 50..600000');
    s.tickMs = n;
  }
  return s;
}
