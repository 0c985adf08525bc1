import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  StablepayClient,
  StablepayConnectionError,
  StablepayError,
  verifyWebhook,
  WebhookVerificationError,
  type PaymentSession,
} from '../../packages/client/src/index.js';
import { rotateWebhookSecret } from '../../src/ledger/merchants/webhook-secrets.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { TEST_MASTER_KEY } from '../support/api-harness.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

// The typed client package (packages/client) against the whole running service on Anvil: create, read, cancel and
// refund through it, its retries and errors, its pagination; and its verifyWebhook against real deliveries,
// including during a webhook secret rotation (docs/client.md).
let h: ServiceHarness;
let receiver: WebhookReceiver;
let m: HarnessMerchant;
let client: StablepayClient;

beforeAll(async () => {
  h = await startServiceHarness();
  receiver = await startWebhookReceiver();
  receiver.acceptPrevious = true;
  m = await h.newMerchant('Client shop', receiver.url);
  receiver.secrets.push(m.webhookSecret);
  client = new StablepayClient({ baseUrl: h.base, apiKey: m.client.creds.key, apiSecret: m.client.creds.secret, retryDelayMs: 50 });
});

afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

const delivery = (eventType: string, sessionId: string) =>
  receiver.received.find((r) => r.eventType === eventType && r.body.includes(sessionId));

describe('the client package', () => {
  it('creates, reads, lists and cancels sessions, with typed errors carrying code, param and request_id', async () => {
    const s = await client.sessions.create({ amount: '4.20', currency: 'USD', order_id: 'client-1' });
    expect(s).toMatchObject({ amount_total: '4.20', currency: 'usd', status: 'open' });
    expect((await client.sessions.retrieve(s.id)).id).toBe(s.id);
    expect((await client.sessions.cancel(s.id)).status).toBe('canceled');
    const err = await client.sessions.cancel(s.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StablepayError);
    expect(err).toMatchObject({ status: 400, code: 'session_expired', param: 'session_id', type: 'invalid_request_error' });
    expect((err as StablepayError).requestId).toMatch(/^req_/);
    await expect(client.sessions.retrieve('cs_nope')).rejects.toMatchObject({ status: 404, code: 'resource_not_found' });

    for (let i = 2; i <= 4; i++) await client.sessions.create({ amount: '1.00', currency: 'USD', order_id: `client-${i}` });
    const seen: PaymentSession[] = [];
    for await (const x of client.sessions.all({ page_size: 2 })) seen.push(x);
    expect(seen.map((x) => x.metadata.order_id).sort()).toEqual(['client-1', 'client-2', 'client-3', 'client-4']);
  });

  it('retries a create whose answer was lost with the same Idempotency-Key: one session, the first answer replayed', async () => {
    let calls = 0;
    const keys: string[] = [];
    const flaky = new StablepayClient({
      baseUrl: h.base,
      apiKey: m.client.creds.key,
      apiSecret: m.client.creds.secret,
      retryDelayMs: 50,
      fetch: async (url, init) => {
        calls++;
        keys.push(new Headers(init?.headers).get('idempotency-key') ?? '');
        const res = await fetch(url, init);
        if (calls === 1) throw new TypeError('fetch failed: socket hang up'); // the request was served; its answer is lost
        return res;
      },
    });
    const s = await flaky.sessions.create({ amount: '2.50', currency: 'USD', order_id: 'client-retry' });
    expect(calls).toBe(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    const rows = await h.t.db.selectFrom('payment_sessions').select('id').where('order_id', '=', 'client-retry').execute();
    expect(rows.map((r) => r.id)).toEqual([s.id]);

    const down = new StablepayClient({
      baseUrl: 'http://127.0.0.1:1',
      apiKey: 'sk_test_x',
      apiSecret: 'x',
      maxRetries: 1,
      retryDelayMs: 10,
    });
    await expect(down.sessions.retrieve('cs_x')).rejects.toBeInstanceOf(StablepayConnectionError);
  });

  it('refunds a paid session and verifies the real webhook deliveries, also across a secret rotation', async () => {
    const paid = await h.paidSession(m, { amount: '5.00' });
    const refund = await client.refunds.create({ session_id: paid.id, refund_id: 'client-refund-1', amount: 100, currency: 'USDT' });
    expect(refund).toMatchObject({ refund_id: 'client-refund-1', amount: 100, currency: 'USDT', session_id: paid.id });
    // The same refund_id and body replay the refund (what makes its retries safe).
    expect((await client.refunds.create({ session_id: paid.id, refund_id: 'client-refund-1', amount: 100, currency: 'USDT' })).id).toBe(
      refund.id,
    );
    expect((await client.refunds.retrieve('client-refund-1')).id).toBe(refund.id);
    const listed = [];
    for await (const r of client.refunds.all({ session_id: paid.id })) listed.push(r.id);
    expect(listed).toEqual([refund.id]);

    await receiver.waitFor(() => delivery('payment.completed', paid.id) !== undefined, 30_000);
    const completed = delivery('payment.completed', paid.id)!;
    const event = verifyWebhook(completed.body, completed.headers, [m.webhookSecret]);
    expect(event).toMatchObject({ type: 'payment.completed', data: { object: { session_id: paid.id, status: 'completed' } } });
    expect(() => verifyWebhook(completed.body, completed.headers, ['whsec_wrong'])).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(completed.body.replace('"completed"', '"failed"'), completed.headers, [m.webhookSecret])).toThrow(
      /No signature matches/,
    );
    const sentAt = Number(completed.headers['x-service-timestamp']);
    expect(() => verifyWebhook(completed.body, completed.headers, [m.webhookSecret], { nowSeconds: sentAt + 301 })).toThrow(/tolerance/);

    // Rotation: the service signs with the new secret and, during the overlap, the previous one.
    const rotated = (await rotateWebhookSecret(h.t.db, new SecretBox(TEST_MASTER_KEY), m.id, 1))!;
    receiver.secrets.push(rotated.webhookSecret);
    const s = await client.sessions.create({ amount: '1.00', currency: 'USD', order_id: 'client-after-rotation' });
    await client.sessions.cancel(s.id);
    await receiver.waitFor(() => delivery('payment.cancelled', s.id) !== undefined, 30_000);
    const canceled = delivery('payment.cancelled', s.id)!;
    expect(canceled.headers['x-service-signature-previous']).toBeDefined();
    expect(verifyWebhook(canceled.body, canceled.headers, [m.webhookSecret]).type).toBe('payment.cancelled'); // not yet switched
    expect(verifyWebhook(canceled.body, canceled.headers, [rotated.webhookSecret]).type).toBe('payment.cancelled'); // switched
    expect(() => verifyWebhook(canceled.body, canceled.headers, ['whsec_other'])).toThrow(WebhookVerificationError);
  });
});
