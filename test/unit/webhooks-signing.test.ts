import { describe, expect, it } from 'vitest';
import { buildDeliveryHeaders, signWebhook } from '../../src/webhooks/signing.js';
import { retryDelayMs, verdictOf } from '../../src/webhooks/retry-policy.js';
import { verifyRequest } from '../support/webhook-receiver.js';

describe('webhook signature', () => {
  it('matches a known answer computed with openssl', () => {
    // printf '%s' '1700000000.0b6f...9a11.{"id":"evt_1","type":"payment.completed"}' | openssl dgst -sha256 -hmac whsec_test
    const sig = signWebhook(
      'whsec_test',
      '1700000000',
      '0b6f6c1e-4a43-4c9a-9d3f-6f1b2f0c9a11',
      '{"id":"evt_1","type":"payment.completed"}',
    );
    expect(sig).toBe('b3fc9602a413ff5699a2fdedc2abd137ccab4afc4d22bd68f6282c9cdffb9eed');
  });

  it('builds exactly the spec headers with a fresh UUID v4 nonce each time', () => {
    const body = '{"id":"evt_1700000000000000001","type":"payment.completed","created_at":1700000000,"data":{"object":{}}}';
    const now = new Date(1_700_000_000_500);
    const a = buildDeliveryHeaders({
      secrets: ['s1'],
      eventId: 'evt_1700000000000000001',
      eventType: 'payment.completed',
      rawBody: body,
      now,
    });
    const b = buildDeliveryHeaders({
      secrets: ['s1'],
      eventId: 'evt_1700000000000000001',
      eventType: 'payment.completed',
      rawBody: body,
      now,
    });
    expect(Object.keys(a).sort()).toEqual(
      [
        'Content-Type',
        'User-Agent',
        'X-Service-Event-ID',
        'X-Service-Event-Type',
        'X-Service-Nonce',
        'X-Service-Signature',
        'X-Service-Timestamp',
      ].sort(),
    );
    expect(a['Content-Type']).toBe('application/json');
    expect(a['User-Agent']).toBe('Service-Webhook/1.0');
    expect(a['X-Service-Timestamp']).toBe('1700000000');
    expect(a['X-Service-Nonce']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a['X-Service-Nonce']).not.toBe(b['X-Service-Nonce']);
    expect(a['X-Service-Signature']).not.toBe(b['X-Service-Signature']);
    expect(a['X-Service-Signature']).toBe(signWebhook('s1', '1700000000', a['X-Service-Nonce'], body));
  });

  it('during a rotation: one hex HMAC with the newest secret in the spec header, the previous secret in its own header', () => {
    const body = '{"id":"evt_5","type":"refund.failed","created_at":1,"data":{"object":{"a":1}}}';
    const h = buildDeliveryHeaders({ secrets: ['new', 'old'], eventId: 'evt_5', eventType: 'refund.failed', rawBody: body });
    expect(h['X-Service-Signature']).toBe(signWebhook('new', h['X-Service-Timestamp'], h['X-Service-Nonce'], body));
    expect(h['X-Service-Signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(h['X-Service-Signature-Previous']).toBe(signWebhook('old', h['X-Service-Timestamp'], h['X-Service-Nonce'], body));
    const lower = Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
    // A receiver built to the spec (one secret, one hex HMAC in X-Service-Signature) accepts with the new secret ...
    expect(verifyRequest(lower, body, ['new'])).toMatchObject({ problems: [], matchedHeader: 'x-service-signature' });
    // ... and, still holding the old secret, refuses unless it was built to accept the previous-secret header.
    expect(verifyRequest(lower, body, ['old']).problems).toEqual(['signature']);
    expect(verifyRequest(lower, body, ['old'], undefined, { acceptPrevious: true })).toMatchObject({
      problems: [],
      matchedHeader: 'x-service-signature-previous',
    });
    expect(verifyRequest(lower, body, ['other'], undefined, { acceptPrevious: true }).problems).toEqual(['signature']);
    expect(verifyRequest(lower, body.replace('"a":1', '"a":2'), ['new']).problems).toEqual(['signature']);
    expect(verifyRequest(lower, body, ['new'], Number(h['X-Service-Timestamp']) + 301).problems).toEqual(['timestamp stale']);
    // Outside an overlap there is no extension header at all.
    expect(
      Object.keys(buildDeliveryHeaders({ secrets: ['new'], eventId: 'evt_5', eventType: 'refund.failed', rawBody: body })),
    ).not.toContain('X-Service-Signature-Previous');
  });

  it('the test receiver refuses a spec header carrying more than one signature', () => {
    const body = '{"id":"evt_6","type":"refund.failed","created_at":1,"data":{"object":{}}}';
    const h = buildDeliveryHeaders({ secrets: ['s'], eventId: 'evt_6', eventType: 'refund.failed', rawBody: body });
    const lower = Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
    const two = { ...lower, 'x-service-signature': `${lower['x-service-signature']},${'ab'.repeat(32)}` };
    expect(verifyRequest(two, body, ['s']).problems).toEqual([
      `signature header is not one hex HMAC: ${two['x-service-signature']}`,
      'signature',
    ]);
  });

  it('refuses to sign without a secret', () => {
    expect(() => buildDeliveryHeaders({ secrets: [], eventId: 'evt_1', eventType: 'x', rawBody: '{}' })).toThrow();
  });
});

describe('retry policy', () => {
  it('succeeds on 2xx, retries on 429, 5xx, timeouts and network errors, and on nothing else', () => {
    const resp = (statusCode: number) => verdictOf({ kind: 'response', statusCode, latencyMs: 1, excerpt: '' });
    for (const s of [200, 201, 204, 299]) expect(resp(s)).toBe('success');
    for (const s of [429, 500, 502, 503, 599]) expect(resp(s)).toBe('retryable');
    for (const s of [100, 301, 302, 400, 401, 403, 404, 409, 410, 422, 428, 431, 600]) expect(resp(s)).toBe('permanent');
    expect(verdictOf({ kind: 'timeout', latencyMs: 30_000 })).toBe('retryable');
    expect(verdictOf({ kind: 'network', error: 'ECONNREFUSED', latencyMs: 1 })).toBe('retryable');
    expect(verdictOf({ kind: 'refused', reason: 'x' })).toBe('permanent');
  });

  it('follows the schedule 1, 2, 4, 8, 16 s exactly five times, jitter only adding up to the ratio', () => {
    const schedule = [1000, 2000, 4000, 8000, 16000];
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(schedule, n, 0.1, () => 0))).toEqual(schedule);
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(schedule, n, 0.1, () => 0.999999))).toEqual([1100, 2200, 4400, 8800, 17600]);
    expect(retryDelayMs(schedule, 6, 0.1)).toBeUndefined();
    for (let i = 0; i < 200; i++) {
      const d = retryDelayMs(schedule, 3, 0.1)!;
      expect(d).toBeGreaterThanOrEqual(4000);
      expect(d).toBeLessThanOrEqual(4400);
    }
  });
});
