import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/api/server.js';
import { registerCheckout } from '../../src/checkout/plugin.js';
import { CHECKOUT_BASE, startApiHarness, testServerDeps, type ApiHarness } from '../support/api-harness.js';
import { SignedClient, type TestResponse } from '../support/signed-client.js';
import { ChainRegistry } from '../../chains/chain-registry.js';

// Request rate limits over real Redis and real HTTP (docs/rate-limits.md). Client IPs come from X-Forwarded-For,
// which these servers trust (TRUST_PROXY), so one machine can play several clients.

const LIST = '/api/v1/checkout/sessions';
const CREATE = '/api/v1/checkout/sessions/create';
const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
const order = () => ({ amount: '1.00', currency: 'USD', order_id: `rl-${randomUUID()}` });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Most requests a GCRA bucket of `perSecond` can admit in `ms`: a full burst plus what refills meanwhile. */
const mostAdmitted = (perSecond: number, ms: number) => perSecond + Math.ceil((ms / 1000) * perSecond);
async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const start = Date.now();
  const v = await f();
  return [v, Date.now() - start];
}

function expect429(r: TestResponse, message: RegExp) {
  expect(r.status).toBe(429);
  expect(r.json).toEqual({
    error: {
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
      message: expect.stringMatching(message),
      param: r.json.error.param,
      doc_url: 'https://docs.test/errors#rate_limit_exceeded',
    },
    request_id: expect.stringMatching(/^req_/),
    timestamp: expect.any(Number),
  });
  expect([null, '']).toContain(r.json.error.param);
  expect(r.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
}

describe('per-key limit (1 per second)', () => {
  let h: ApiHarness;
  let shop: SignedClient;
  let other: SignedClient;
  beforeAll(async () => {
    h = await startApiHarness({ trustProxy: true, rateLimits: { perKeyPerSecond: 1, perIpPerSecond: 0, authFailuresPerIpPerMinute: 0 } });
    shop = (await h.merchant('A')).test;
    other = (await h.merchant('B')).test;
  });
  afterAll(async () => h.close());

  it('reports the key budget in RateLimit-* headers on a served request', async () => {
    const fresh = (await h.merchant('C')).test;
    const r = await fresh.get(LIST);
    expect(r.status).toBe(200);
    expect(r.headers.get('ratelimit-limit')).toBe('1');
    expect(r.headers.get('ratelimit-remaining')).toBe('0');
    expect(r.headers.get('ratelimit-reset')).toBe('1');
    expect(r.headers.get('retry-after')).toBeNull();
  });

  it('answers 429 rate_limit_exceeded with Retry-After over the limit, creates nothing, keeps the nonce; another key is served', async () => {
    const attempts = Array.from({ length: 4 }, () => ({ body: order(), nonce: randomUUID(), timestamp: Math.floor(Date.now() / 1000) }));
    const answers = await Promise.all(attempts.map((a) => shop.post(CREATE, a.body, { nonce: a.nonce, timestamp: a.timestamp })));
    expect(answers.filter((r) => r.status === 200).length).toBeLessThanOrEqual(2);
    const i = answers.findIndex((r) => r.status === 429);
    expect(i).toBeGreaterThanOrEqual(0);
    const refused = answers[i]!;
    expect429(refused, /Too many requests with this API key\. Retry after 1 s\./);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('ratelimit-limit')).toBe('1');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');

    // Another merchant's key is served while this one is throttled.
    expect((await other.get(LIST)).status).toBe(200);

    const a = attempts[i]!;
    const stored = await h.t.db.selectFrom('payment_sessions').select('id').where('order_id', '=', a.body.order_id).execute();
    expect(stored).toEqual([]);
    // The refused request, sent again unchanged once the key has room, is served: its nonce was not consumed.
    let again = refused;
    for (const end = Date.now() + 4000; again.status === 429 && Date.now() < end; ) {
      await sleep(Number(again.headers.get('retry-after')) * 1000);
      again = await shop.post(CREATE, a.body, { nonce: a.nonce, timestamp: a.timestamp });
    }
    expect(again.status).toBe(200);
    expect(again.json.metadata.order_id).toBe(a.body.order_id);
  });

  it('holds across two API processes on one Redis prefix', async () => {
    const second: FastifyInstance = await buildServer({
      ...testServerDeps({ db: h.t.db, redis: h.redis, box: h.box, redisPrefix: h.redisPrefix }),
      trustProxy: true,
      rateLimits: { perKeyPerSecond: 1, perIpPerSecond: 0, authFailuresPerIpPerMinute: 0 },
    });
    try {
      const url = await second.listen({ host: '127.0.0.1', port: 0 });
      const viaSecond = new SignedClient(url, shop.creds);
      await sleep(1100); // a full bucket
      const first = await Promise.all([1, 2, 3].map(() => shop.get(LIST)));
      expect(first.some((r) => r.status === 429)).toBe(true);
      const r = await viaSecond.get(LIST);
      expect429(r, /API key/);
    } finally {
      await second.close();
    }
  });

  it('touches last_used_at only after a request is authenticated', async () => {
    const m = await h.merchant('D');
    const lastUsed = async () =>
      (await h.t.db.selectFrom('api_keys').select('last_used_at').where('merchant_id', '=', m.merchantId).executeTakeFirstOrThrow())
        .last_used_at;
    const wrong = await m.test.get(LIST, { signWith: 'not-the-secret' });
    expect(wrong.status).toBe(401);
    expect(wrong.json.error.code).toBe('invalid_signature');
    await sleep(300); // the touch is written in the background
    expect(await lastUsed()).toBeNull();
    expect((await m.test.get(LIST)).status).toBe(200);
    const deadline = Date.now() + 3000;
    while ((await lastUsed()) === null && Date.now() < deadline) await sleep(50);
    expect(await lastUsed()).toBeInstanceOf(Date);
  });
});

describe('per-IP limits (5 requests per second, 3 failed authentications per minute)', () => {
  let h: ApiHarness;
  let shop: SignedClient;
  let sessionId: string;
  beforeAll(async () => {
    h = await startApiHarness((t) => ({
      trustProxy: true,
      rateLimits: { perKeyPerSecond: 0, perIpPerSecond: 5, authFailuresPerIpPerMinute: 3 },
      plugins: [(app) => registerCheckout(app, { db: t.db, adapters: new ChainRegistry(), keys: null, checkoutBaseUrl: CHECKOUT_BASE })],
    }));
    shop = (await h.merchant()).test;
    const created = await shop.post(CREATE, order(), from('192.0.2.1'));
    expect(created.status).toBe(200);
    sessionId = created.json.id;
  });
  afterAll(async () => h.close());

  it('throttles a flood of unauthenticated requests from one IP before authentication; other IPs are served', async () => {
    const [flood, ms] = await timed(() =>
      Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          fetch(`${h.baseUrl}${i % 2 ? CREATE : LIST}`, {
            method: i % 2 ? 'POST' : 'GET',
            headers: { 'x-forwarded-for': '198.51.100.7' },
            body: i % 2 ? '{}' : undefined,
          }),
        ),
      ),
    );
    const statuses = flood.map((r) => r.status);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(Math.min(29, mostAdmitted(5, ms)));
    const throttled = flood.find((r) => r.status === 429)!;
    expect(throttled.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(((await throttled.json()) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
    expect((await shop.get(LIST, from('198.51.100.8'))).status).toBe(200);
  });

  it('throttles the public page routes per IP', async () => {
    const [answers, ms] = await timed(() =>
      Promise.all(Array.from({ length: 20 }, () => shop.get(`/pay/${sessionId}/status`, from('198.51.100.20')))),
    );
    expect(answers.filter((r) => r.status === 200).length).toBeLessThanOrEqual(Math.min(19, mostAdmitted(5, ms)));
    expect429(answers.find((r) => r.status === 429)!, /Too many requests from this address\./);
    // The page itself shares the address's budget: a burst of page loads is throttled too (a burst, not one request,
    // so that a refill between the two bursts on a slow machine cannot let it through).
    const pages = await Promise.all(
      Array.from({ length: 20 }, () => fetch(`${h.baseUrl}/pay/${sessionId}`, { headers: { 'x-forwarded-for': '198.51.100.20' } })),
    );
    expect(pages.some((p) => p.status === 429)).toBe(true);
    expect((await shop.get(`/pay/${sessionId}/status`, from('198.51.100.21'))).status).toBe(200);
  });

  it('counts an IPv6 /64 as one client', async () => {
    const [answers, ms] = await timed(() =>
      Promise.all(
        Array.from({ length: 12 }, (_, i) => shop.get(`/pay/${sessionId}/status`, from(`2001:db8:7:1::${(i + 1).toString(16)}`))),
      ),
    );
    expect(answers.filter((r) => r.status === 200).length).toBeLessThanOrEqual(Math.min(11, mostAdmitted(5, ms)));
    expect((await shop.get(`/pay/${sessionId}/status`, from('2001:db8:7:2::1'))).status).toBe(200);
  });

  it('after 3 failed authentications throttles that IP: a valid signature is still served, a key failing 3 more times gets 429, not another IP', async () => {
    for (let i = 0; i < 3; i++) {
      const bad = await shop.get(LIST, { signWith: 'wrong', ...from('203.0.113.9') });
      expect(bad.status).toBe(401);
    }
    // A valid signature proves the secret (issue 34 item 7; test/integration/api-auth-failures.test.ts).
    expect((await shop.get(LIST, from('203.0.113.9'))).status).toBe(200);
    await sleep(1000); // the per-IP request limit (5 per second) refills
    for (let i = 0; i < 3; i++) expect((await shop.get(LIST, { signWith: 'wrong', ...from('203.0.113.9') })).status).toBe(401);
    const good = await shop.get(LIST, from('203.0.113.9'));
    expect429(good, /Too many failed authentications from this address with this API key\./);
    const seconds = Number(good.headers.get('retry-after'));
    expect(seconds).toBeGreaterThanOrEqual(15);
    expect(seconds).toBeLessThanOrEqual(20);
    expect((await shop.get(LIST, from('203.0.113.10'))).status).toBe(200);
    // The page routes of that IP are not affected by its failed authentications.
    expect((await shop.get(`/pay/${sessionId}/status`, from('203.0.113.9'))).status).toBe(200);
  });

  it('ignores X-Forwarded-For unless the proxy is trusted', async () => {
    const plain = await startApiHarness({ rateLimits: { perKeyPerSecond: 0, perIpPerSecond: 2, authFailuresPerIpPerMinute: 0 } });
    try {
      const c = (await plain.merchant()).test;
      const [answers, ms] = await timed(() => Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map((i) => c.get(LIST, from(`198.51.100.${100 + i}`)))));
      expect(answers.filter((r) => r.status === 200).length).toBeLessThanOrEqual(Math.min(7, mostAdmitted(2, ms)));
    } finally {
      await plain.close();
    }
  });
});

describe('when Redis does not answer', () => {
  let h: ApiHarness;
  let hung: Server;
  let silent: Redis;
  const logs: string[] = [];
  beforeAll(async () => {
    // A server that accepts connections and never answers: every limiter call hangs until its timeout.
    hung = createServer(() => {});
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
    const port = (hung.address() as { port: number }).port;
    silent = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, lazyConnect: true });
    silent.on('error', () => {});
    const logStream = new PassThrough();
    logStream.on('data', (b: Buffer) => logs.push(...b.toString().split('\n').filter(Boolean)));
    h = await startApiHarness({
      rateLimitRedis: silent,
      rateLimits: { perKeyPerSecond: 1, perIpPerSecond: 1, authFailuresPerIpPerMinute: 1 },
      logLevel: 'warn',
      logStream,
    });
  });
  afterAll(async () => {
    await h.close();
    silent.disconnect();
    hung.close();
  });

  it('lets requests through (fail open) and logs it once, instead of answering 5xx', async () => {
    const c = (await h.merchant()).test;
    for (let i = 0; i < 3; i++) expect((await c.get(LIST)).status).toBe(200);
    expect((await c.get(LIST, { signWith: 'wrong' })).status).toBe(401);
    expect((await fetch(`${h.baseUrl}/nothing-here`)).status).toBe(404);
    const lines = logs.filter((l) => l.includes('rate limit check failed'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!).level).toBe(40);
  });
});
