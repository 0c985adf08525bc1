import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerCheckout } from '../../src/checkout/plugin.js';
import { CHECKOUT_BASE, startApiHarness, type ApiHarness } from '../support/api-harness.js';
import type { SignedClient } from '../support/signed-client.js';
import { ChainRegistry } from '../../chains/chain-registry.js';

// Live-status streams (GET /pay/{id}/events) over real HTTP: one status read per session and tick whatever the number
// of streams, caps per session and per client IP (429 in the spec shape), slots freed when clients go.

const INTERVAL_MS = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Stream {
  status: number;
  events: Array<Record<string, unknown>>;
  ended: Promise<void>;
  body: string;
  close(): void;
}

let h: ApiHarness;
let shop: SignedClient;
const reads = new Map<string, number>();
const readsOf = (id: string) => reads.get(id) ?? 0;

beforeAll(async () => {
  h = await startApiHarness((t) => ({
    trustProxy: true,
    plugins: [
      (app) =>
        registerCheckout(app, {
          db: t.db,
          adapters: new ChainRegistry(),
          keys: null,
          checkoutBaseUrl: CHECKOUT_BASE,
          statusIntervalMs: INTERVAL_MS,
          streamsPerSession: 6,
          streamsPerIp: 3,
          onStatusRead: (id) => reads.set(id, readsOf(id) + 1),
        }),
    ],
  }));
  shop = (await h.merchant()).test;
});
afterAll(async () => h.close());

async function newSession(): Promise<string> {
  const r = await shop.post('/api/v1/checkout/sessions/create', { amount: '3.00', currency: 'USD', order_id: `st-${randomUUID()}` });
  expect(r.status).toBe(200);
  return r.json.id as string;
}

/** Opens a stream from `ip`; resolves once the answer's status is known and, for 200, the first event arrived. */
async function open(id: string, ip: string): Promise<Stream> {
  const ac = new AbortController();
  const res = await fetch(`${h.baseUrl}/pay/${id}/events`, { signal: ac.signal, headers: { 'x-forwarded-for': ip } });
  const s: Stream = { status: res.status, events: [], body: '', ended: Promise.resolve(), close: () => ac.abort() };
  if (res.status !== 200) {
    s.body = await res.text();
    return s;
  }
  const reader = res.body!.getReader();
  let text = '';
  let first: () => void = () => {};
  const gotFirst = new Promise<void>((r) => (first = r));
  s.ended = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += new TextDecoder().decode(value);
        let m: RegExpExecArray | null;
        while ((m = /^data: (.*)\n\n/m.exec(text))) {
          s.events.push(JSON.parse(m[1]!) as Record<string, unknown>);
          text = text.slice(m.index + m[0].length);
          first();
        }
      }
    } catch {
      // aborted by the test
    } finally {
      first();
    }
  })();
  await gotFirst;
  return s;
}

async function until(f: () => Promise<boolean> | boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(25);
  }
}

describe('live-status streams', () => {
  it('reads the status once per tick for all streams of a session and fans every change out to each', async () => {
    const id = await newSession();
    const streams = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => open(id, `198.51.100.${i}`)));
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200, 200, 200, 200]);
    for (const s of streams) expect(s.events[0]).toMatchObject({ state: 'select' });

    const before = readsOf(id);
    const started = Date.now();
    await sleep(1000);
    const ticks = (Date.now() - started) / INTERVAL_MS;
    const during = readsOf(id) - before;
    // One stream per connection would read six times per tick.
    expect(during).toBeGreaterThanOrEqual(3);
    expect(during).toBeLessThanOrEqual(Math.ceil(ticks) + 1);

    const canceled = await shop.post(`/api/v1/checkout/sessions/${id}/cancel`, {});
    expect(canceled.status).toBe(200);
    await Promise.all(streams.map((s) => s.ended));
    for (const s of streams) expect(s.events.at(-1)).toMatchObject({ state: 'canceled' });

    // No subscriber left: the session is no longer read.
    const after = readsOf(id);
    await sleep(5 * INTERVAL_MS);
    expect(readsOf(id)).toBe(after);
  });

  it('refuses a stream over the per-session cap with 429 and admits one again after a client leaves', async () => {
    const id = await newSession();
    const held = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => open(id, `203.0.113.${i}`)));
    expect(held.every((s) => s.status === 200)).toBe(true);
    const seventh = await open(id, '203.0.113.7');
    expect(seventh.status).toBe(429);
    const body = JSON.parse(seventh.body);
    expect(body).toMatchObject({
      error: { type: 'rate_limit_error', code: 'rate_limit_exceeded', doc_url: 'https://docs.test/errors#rate_limit_exceeded' },
      request_id: expect.stringMatching(/^req_/),
      timestamp: expect.any(Number),
    });
    expect(body.error.message).toMatch(/live streams for this payment session/);
    // Another session is not affected by this one's cap.
    const elsewhere = await open(await newSession(), '203.0.113.7');
    expect(elsewhere.status).toBe(200);
    elsewhere.close();

    held[0]!.close();
    let again: Stream | undefined;
    await until(async () => {
      again = await open(id, '203.0.113.8');
      return again.status === 200;
    });
    expect(again!.events[0]).toMatchObject({ state: 'select' });
    for (const s of [...held, again!]) s.close();
  });

  it('refuses a stream over the per-IP cap with 429 and Retry-After, and frees the slots when the clients disconnect', async () => {
    const ip = '192.0.2.50';
    const ids = await Promise.all([1, 2, 3, 4].map(() => newSession()));
    const held = await Promise.all(ids.slice(0, 3).map((id) => open(id, ip)));
    expect(held.map((s) => s.status)).toEqual([200, 200, 200]);
    const res = await fetch(`${h.baseUrl}/pay/${ids[3]}/events`, { headers: { 'x-forwarded-for': ip } });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('10');
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('rate_limit_exceeded');
    expect(body.error.message).toMatch(/live streams from this address/);
    // Another address is served.
    const other = await open(ids[3]!, '192.0.2.51');
    expect(other.status).toBe(200);
    other.close();

    for (const s of held) s.close();
    let next: Stream[] = [];
    await until(async () => {
      for (const s of next) s.close();
      next = await Promise.all(ids.slice(1, 4).map((id) => open(id, ip)));
      return next.every((s) => s.status === 200);
    });
    for (const s of next) s.close();
  });

  it('answers 404 in the error shape for an unknown session and holds no slot for it', async () => {
    for (let i = 0; i < 5; i++) {
      const s = await open('cs_does_not_exist', '192.0.2.99');
      expect(s.status).toBe(404);
      expect(JSON.parse(s.body).error.code).toBe('resource_not_found');
    }
    const ok = await open(await newSession(), '192.0.2.99');
    expect(ok.status).toBe(200);
    ok.close();
  });
});
