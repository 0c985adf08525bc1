import { describe, expect, it } from 'vitest';
import { addIntervals, nextBoundaryAfter } from '../../src/domain/subscription-periods.js';
import { DEFAULT_SUBSCRIPTION_SETTINGS, subscriptionSettingsFromEnv } from '../../src/domain/subscription-settings.js';
import { maskAddress } from '../../src/ledger/subscriptions/payment-methods.js';

const d = (s: string) => new Date(s);

describe('billing periods', () => {
  it('months from one anchor clamp to the month end without drifting', () => {
    const a = d('2027-01-31T10:00:00Z');
    expect([1, 2, 3, 4, 13].map((k) => addIntervals(a, 'month', k).toISOString())).toEqual([
      '2027-02-28T10:00:00.000Z',
      '2027-03-31T10:00:00.000Z',
      '2027-04-30T10:00:00.000Z',
      '2027-05-31T10:00:00.000Z',
      '2028-02-29T10:00:00.000Z',
    ]);
    expect(addIntervals(d('2028-02-29T00:00:00Z'), 'year', 1).toISOString()).toBe('2029-02-28T00:00:00.000Z');
    expect(addIntervals(a, 'week', 2).toISOString()).toBe('2027-02-14T10:00:00.000Z');
    expect(addIntervals(a, 'day', 1).toISOString()).toBe('2027-02-01T10:00:00.000Z');
  });

  it('nextBoundaryAfter finds the first boundary strictly after a time', () => {
    const a = d('2027-01-31T10:00:00Z');
    expect(nextBoundaryAfter(a, 'month', a).toISOString()).toBe('2027-02-28T10:00:00.000Z');
    expect(nextBoundaryAfter(a, 'month', d('2027-02-28T10:00:00Z')).toISOString()).toBe('2027-03-31T10:00:00.000Z');
    expect(nextBoundaryAfter(a, 'day', d('2030-06-15T09:59:59Z')).toISOString()).toBe('2030-06-15T10:00:00.000Z');
    expect(nextBoundaryAfter(a, 'year', d('2040-01-31T10:00:00Z')).toISOString()).toBe('2041-01-31T10:00:00.000Z');
  });
});

describe('settings', () => {
  it('reads the retry schedule, allowance periods and expiry from the environment', () => {
    expect(subscriptionSettingsFromEnv({})).toEqual(DEFAULT_SUBSCRIPTION_SETTINGS);
    const s = subscriptionSettingsFromEnv({
      SUBSCRIPTION_RETRY_DAYS: '1,2',
      SUBSCRIPTION_ALLOWANCE_PERIODS: '6',
      SUBSCRIPTION_INCOMPLETE_EXPIRY_HOURS: '1',
    });
    expect(s).toMatchObject({ retryOffsetsMs: [86_400_000, 172_800_000], allowancePeriods: 6, incompleteExpiryMs: 3_600_000 });
    expect(() => subscriptionSettingsFromEnv({ SUBSCRIPTION_RETRY_DAYS: '3,1' })).toThrow(/SUBSCRIPTION_RETRY_DAYS/);
    expect(() => subscriptionSettingsFromEnv({ SUBSCRIPTION_ALLOWANCE_PERIODS: '0' })).toThrow(/SUBSCRIPTION_ALLOWANCE_PERIODS/);
  });

  it('masks wallet addresses', () => {
    expect(maskAddress('0xAbCdEf0123456789aBcDeF0123456789AbCdEf01')).toBe('0xAbCd…Ef01');
    expect(maskAddress('TJRabPrwbZy45sbavfcjinPJC18kjpRTv8')).toBe('TJRa…RTv8');
  });
});
