import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { retentionSettingsFrom } from '../../src/jobs/retention-settings.js';

// The RETENTION_* settings (docs/retention.md): defaults, `0`/`off` = keep forever, and a bad value stops the start
// with a message naming the variable.

const MASTER = { MASTER_KEY: '5a'.repeat(32) };
const settings = (env: Record<string, string>) => retentionSettingsFrom(loadConfig({ ...MASTER, ...env }));
const DAY = 86_400_000;

describe('retention settings', () => {
  it('defaults: 90 days of webhook events and reconcile runs, 168 h of idempotency keys, 30 days of console sessions, hourly', () => {
    expect(settings({})).toEqual({
      webhookEventsMs: 90 * DAY,
      idempotencyMs: 168 * 3_600_000,
      reconcileRunsMs: 90 * DAY,
      consoleSessionsMs: 30 * DAY,
      intervalMs: 3_600_000,
      batchRows: 5000,
    });
  });

  it('0 or off keeps a class forever', () => {
    expect(
      settings({ RETENTION_WEBHOOK_EVENTS_DAYS: 'off', RETENTION_IDEMPOTENCY_HOURS: '0', RETENTION_CONSOLE_SESSIONS_DAYS: 'OFF' }),
    ).toMatchObject({
      webhookEventsMs: null,
      idempotencyMs: null,
      consoleSessionsMs: null,
      reconcileRunsMs: 90 * DAY,
    });
    expect(settings({ RETENTION_RECONCILE_RUNS_DAYS: '7' }).reconcileRunsMs).toBe(7 * DAY);
  });

  it.each([
    ['RETENTION_WEBHOOK_EVENTS_DAYS', 'ten', /RETENTION_WEBHOOK_EVENTS_DAYS: must be a whole number of days 1\.\.36500, or 0\/off/],
    ['RETENTION_WEBHOOK_EVENTS_DAYS', '-5', /RETENTION_WEBHOOK_EVENTS_DAYS: must be a whole number of days/],
    ['RETENTION_WEBHOOK_EVENTS_DAYS', '1.5', /RETENTION_WEBHOOK_EVENTS_DAYS: must be a whole number of days/],
    ['RETENTION_IDEMPOTENCY_HOURS', '1', /RETENTION_IDEMPOTENCY_HOURS: must be a whole number of hours 24\.\.876000/],
    ['RETENTION_RECONCILE_RUNS_DAYS', '99999', /RETENTION_RECONCILE_RUNS_DAYS: must be a whole number of days 1\.\.36500/],
    ['RETENTION_CONSOLE_SESSIONS_DAYS', 'never', /RETENTION_CONSOLE_SESSIONS_DAYS: must be/],
    ['RETENTION_BATCH_ROWS', '10', /RETENTION_BATCH_ROWS/],
    ['RETENTION_INTERVAL_MS', 'hourly', /RETENTION_INTERVAL_MS/],
  ])('refuses %s=%s at start-up, naming the variable', (name, value, message) => {
    expect(() => loadConfig({ ...MASTER, [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...MASTER, [name]: value })).toThrow(message);
  });
});
