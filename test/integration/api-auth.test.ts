import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey, createApiKey } from '../../src/ledger/merchants/merchants.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { SignedClient, sign } from '../support/signed-client.js';

const CREATE = '/api/v1/checkout/sessions/create';
let h: ApiHarness;
let shop: SignedClient;
let merchantId: string;
let n = 0;
const body = () => ({ amount: '1.00', currency: 'USD', order_id: `auth-${Date.now()}-${n++}` });

beforeAll(async () => {
  h = await startApiHarness();
  const m = await h.merchant();
  shop = m.test;
  merchantId = m.merchantId;
});
afterAll(async () => h.close());

function expectAuthError(r: { status: number; json: any }, code: string, param?: string) {
  expect(r.status).toBe(401);
  expect(r.json.error.type).toBe('authentication_error');
  expect(r.json.error.code).toBe(code);
  if (param !== undefined) expect(r.json.error.param).toBe(param);
  expect(r.json.request_id).toMatch(/^req_/);
}

const sessionCount = async () =>
  Number(
    (
      await h.t.db
        .selectFrom('payment_sessions')
        .select((eb) => eb.fn.countAll<bigint>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('request authentication', () => {
  it('accepts a correctly signed request, with or without a matching X-Merchant-Id', async () => {
    expect((await shop.post(CREATE, body())).status).toBe(200);
    const withId = new SignedClient(h.baseUrl, { ...shop.creds, merchantId });
    expect((await withId.post(CREATE, body())).status).toBe(200);
  });

  it.each([
    ['no Authorization header', { omit: ['authorization'] as const }],
    ['a key without Bearer', { headers: { authorization: 'sk_test_abc' } }],
    ['an unknown key', { headers: { authorization: 'Bearer sk_test_000000000000000000000000000000AA' } }],
    ['a publishable-looking key', { headers: { authorization: 'Bearer pk_test_abc' } }],
  ])('refuses %s with invalid_api_key', async (_n, opts) => {
    const before = await sessionCount();
    expectAuthError(await shop.request('POST', CREATE, { body: body(), ...(opts as object) }), 'invalid_api_key');
    expect(await sessionCount()).toBe(before);
  });

  it('refuses a revoked key, while another active key of the merchant keeps working (rotation)', async () => {
    const k = await createApiKey(h.t.db, h.box, merchantId, 'test');
    const rotated = new SignedClient(h.baseUrl, { key: k.key, secret: k.secret });
    expect((await rotated.post(CREATE, body())).status).toBe(200);
    expect(await revokeApiKey(h.t.db, k.key_prefix)).toBe(1);
    await new Promise((r) => setTimeout(r, 600)); // the harness caches a resolved key for at most 500 ms
    expectAuthError(await rotated.post(CREATE, body()), 'invalid_api_key');
    expect((await shop.post(CREATE, body())).status).toBe(200);
  });

  it.each([
    ['timestamp', 'X-Service-Timestamp'],
    ['nonce', 'X-Service-Nonce'],
    ['signature', 'X-Service-Signature'],
  ] as const)('refuses a missing %s header with missing_auth_header', async (which, header) => {
    expectAuthError(await shop.request('POST', CREATE, { body: body(), omit: [which] }), 'missing_auth_header', header);
  });

  it('refuses a mismatched X-Merchant-Id with merchant_mismatch', async () => {
    const r = await shop.post(CREATE, body(), { headers: { 'x-merchant-id': 'mch_someoneelse0000000000000' } });
    expectAuthError(r, 'merchant_mismatch', 'X-Merchant-Id');
  });

  it('accepts timestamps 299 s either way and refuses 301 s either way', async () => {
    // The server's second can only be the same as ours or later when it checks: a past timestamp is taken from our
    // second rounded up and a future one from our second rounded down, so a second ticking over during the request
    // (a loaded machine) can only move each case further from the 300 s boundary.
    const floor = () => Math.floor(Date.now() / 1000);
    const ceil = () => Math.ceil(Date.now() / 1000);
    expect((await shop.post(CREATE, body(), { timestamp: ceil() - 299 })).status).toBe(200);
    expect((await shop.post(CREATE, body(), { timestamp: floor() + 299 })).status).toBe(200);
    expectAuthError(await shop.post(CREATE, body(), { timestamp: floor() - 301 }), 'timestamp_out_of_window', 'X-Service-Timestamp');
    expectAuthError(await shop.post(CREATE, body(), { timestamp: ceil() + 301 }), 'timestamp_out_of_window', 'X-Service-Timestamp');
  });

  it('refuses a non-numeric timestamp', async () => {
    const r = await shop.request('POST', CREATE, { body: body(), headers: { 'x-service-timestamp': 'yesterday' } });
    expectAuthError(r, 'timestamp_out_of_window');
  });

  it('refuses a wrong signature, a signature by another secret, and a signature over other bytes', async () => {
    expectAuthError(
      await shop.post(CREATE, body(), { headers: { 'x-service-signature': 'ab'.repeat(32) } }),
      'invalid_signature',
      'X-Service-Signature',
    );
    expectAuthError(await shop.post(CREATE, body(), { headers: { 'x-service-signature': 'not-hex' } }), 'invalid_signature');
    expectAuthError(await shop.post(CREATE, body(), { signWith: 'another-secret' }), 'invalid_signature');
    // Signed over a re-serialisation instead of the bytes sent.
    const b = body();
    const sent = JSON.stringify(b, null, 2);
    const ts = String(Math.floor(Date.now() / 1000));
    const nonce = randomUUID();
    const r = await shop.request('POST', CREATE, {
      body: sent,
      timestamp: Number(ts),
      nonce,
      headers: { 'x-service-signature': sign(shop.creds.secret, ts, nonce, JSON.stringify(b)) },
    });
    expectAuthError(r, 'invalid_signature');
  });

  it('verifies a body with unusual whitespace and unicode exactly as sent', async () => {
    const raw = `\n\t{  "amount" :"2.00",\r\n "currency":  "USD" ,"order_id":"ws-${Date.now()}", "description": "caf\\u00e9 ☕  "  }  \n`;
    const r = await shop.post(CREATE, raw);
    expect(r.status).toBe(200);
    expect(r.json.description).toBe('café ☕  ');
  });

  it('signs GET requests over the empty string', async () => {
    const c = (await shop.post(CREATE, body())).json;
    expect((await shop.get(`/api/v1/checkout/sessions/${c.id}`)).status).toBe(200);
  });

  it('refuses a replayed nonce, and a nonce is per key', async () => {
    const nonce = randomUUID();
    expect((await shop.post(CREATE, body(), { nonce })).status).toBe(200);
    const before = await sessionCount();
    expectAuthError(await shop.post(CREATE, body(), { nonce }), 'nonce_reused', 'X-Service-Nonce');
    expect(await sessionCount()).toBe(before);
    const other = await h.merchant('Other');
    expect((await other.test.post(CREATE, body(), { nonce })).status).toBe(200);
  });

  it('does not burn a nonce on a request with a bad signature', async () => {
    const nonce = randomUUID();
    expectAuthError(await shop.post(CREATE, body(), { nonce, signWith: 'wrong' }), 'invalid_signature');
    expect((await shop.post(CREATE, body(), { nonce })).status).toBe(200);
  });

  it('keeps a nonce for twice the window in Redis', async () => {
    const nonce = randomUUID();
    await shop.post(CREATE, body(), { nonce });
    const keys = await h.redis.keys(`${h.redisPrefix}:nonce:*:${nonce}`);
    expect(keys).toHaveLength(1);
    const ttl = await h.redis.ttl(keys[0]!);
    expect(ttl).toBeGreaterThan(590);
    expect(ttl).toBeLessThanOrEqual(600);
  });

  it('gives exactly one success for 50 parallel requests with one nonce', async () => {
    const nonce = randomUUID();
    const ts = Math.floor(Date.now() / 1000);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => shop.post(CREATE, { ...body(), order_id: `race-${nonce}-${i}` }, { nonce, timestamp: ts })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 401 && r.json.error.code === 'nonce_reused')).toHaveLength(49);
  });

  it('never puts the secret or the key into an error body', async () => {
    const r = await shop.post(CREATE, body(), { signWith: 'wrong' });
    expect(r.text).not.toContain(shop.creds.secret);
    expect(r.text).not.toContain(shop.creds.key);
  });
});
