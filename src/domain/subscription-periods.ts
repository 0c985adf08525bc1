/** A subscription's billing interval (column subscriptions.interval). */
export type SubscriptionInterval = 'day' | 'week' | 'month' | 'year';

// Billing periods in UTC calendar arithmetic. Period ends are computed from one anchor (anchor + k intervals), never
// by adding an interval to the previous end, so Jan 31 monthly gives Feb 28, Mar 31, Apr 30 ... without drifting.

export const DAY_MS = 86_400_000;

/** anchor + k intervals; a day of month past the target month's end is clamped to its last day. */
export function addIntervals(anchor: Date, interval: SubscriptionInterval, k: number): Date {
  switch (interval) {
    case 'day':
      return new Date(anchor.getTime() + k * DAY_MS);
    case 'week':
      return new Date(anchor.getTime() + k * 7 * DAY_MS);
    case 'month':
      return addMonths(anchor, k);
    case 'year':
      return addMonths(anchor, 12 * k);
    default: {
      const never: never = interval;
      return never;
    }
  }
}

function addMonths(anchor: Date, months: number): Date {
  const y = anchor.getUTCFullYear();
  const m = anchor.getUTCMonth() + months;
  const targetYear = y + Math.floor(m / 12);
  const targetMonth = ((m % 12) + 12) % 12;
  const lastDay = new Date(Date.UTC(targetYear, targetMonth + 1, 0)).getUTCDate();
  return new Date(
    Date.UTC(
      targetYear,
      targetMonth,
      Math.min(anchor.getUTCDate(), lastDay),
      anchor.getUTCHours(),
      anchor.getUTCMinutes(),
      anchor.getUTCSeconds(),
      anchor.getUTCMilliseconds(),
    ),
  );
}

/** Approximate length of one interval, for sizing (never for period boundaries). */
export function nominalIntervalMs(interval: SubscriptionInterval): number {
  return { day: DAY_MS, week: 7 * DAY_MS, month: 30 * DAY_MS, year: 365 * DAY_MS }[interval];
}

/** The first period boundary anchor + k·interval (k ≥ 1) strictly after `after`. */
export function nextBoundaryAfter(anchor: Date, interval: SubscriptionInterval, after: Date): Date {
  let k = Math.max(1, Math.floor((after.getTime() - anchor.getTime()) / nominalIntervalMs(interval)) - 1);
  while (addIntervals(anchor, interval, k).getTime() > after.getTime() && k > 1) k--;
  while (addIntervals(anchor, interval, k).getTime() <= after.getTime()) k++;
  return addIntervals(anchor, interval, k);
}
