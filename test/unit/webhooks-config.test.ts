import { describe, expect, it } from 'vitest';
import { loadWebhookConfig, webhookSettingsFrom, WebhookConfigError, webhookEnvSchema } from '../../src/webhooks/config.js';

describe('webhook configuration', () => {
  it('defaults to the spec: 30 s timeout, retries after 1, 2, 4, 8, 16 s', () => {
    const c = loadWebhookConfig({});
    expect(c.timeoutMs).toBe(30_000);
    expect(c.retrySchedule).toEqual([1000, 2000, 4000, 8000, 16000]);
    expect(c).toMatchObject({
      jitterRatio: 0.1,
      concurrency: 50,
      perMerchantConcurrency: 10,
      allowPrivateTargetsInTest: true,
      secretOverlapHours: 24,
    });
  });
  it('reads every variable, ignoring empty ones and other variables', () => {
    const c = loadWebhookConfig({
      WEBHOOK_RETRY_SCHEDULE_MS: '100, 200,300',
      WEBHOOK_TIMEOUT_MS: '500',
      WEBHOOK_CONCURRENCY: '4',
      WEBHOOK_PER_MERCHANT_CONCURRENCY: '2',
      WEBHOOK_ALLOW_PRIVATE_TARGETS_IN_TEST: 'false',
      WEBHOOK_SECRET_OVERLAP_HOURS: '',
      PORT: 'nonsense',
    });
    expect(c).toMatchObject({
      retrySchedule: [100, 200, 300],
      timeoutMs: 500,
      concurrency: 4,
      perMerchantConcurrency: 2,
      allowPrivateTargetsInTest: false,
      secretOverlapHours: 24,
    });
  });
  it('names each bad variable', () => {
    expect(() => loadWebhookConfig({ WEBHOOK_RETRY_SCHEDULE_MS: '1s,2s', WEBHOOK_TIMEOUT_MS: '5' })).toThrow(WebhookConfigError);
    try {
      loadWebhookConfig({ WEBHOOK_RETRY_SCHEDULE_MS: '1s,2s', WEBHOOK_TIMEOUT_MS: '5' });
    } catch (e) {
      expect((e as Error).message).toMatch(/WEBHOOK_RETRY_SCHEDULE_MS/);
      expect((e as Error).message).toMatch(/WEBHOOK_TIMEOUT_MS/);
    }
  });
  it('accepts values already parsed by the service schema', () => {
    const parsed = webhookEnvSchema.parse({ WEBHOOK_RETRY_SCHEDULE_MS: '10,20', WEBHOOK_ALLOW_PRIVATE_TARGETS_IN_TEST: 'false' });
    expect(webhookSettingsFrom({ ...parsed, PORT: 3000 })).toMatchObject({ retrySchedule: [10, 20], allowPrivateTargetsInTest: false });
    expect(webhookSettingsFrom({}).retrySchedule).toEqual([1000, 2000, 4000, 8000, 16000]);
  });
});
