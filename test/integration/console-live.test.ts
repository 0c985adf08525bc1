import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleActor } from '../../src/console/actor.js';
import { consoleErrorHandler } from '../../src/console/errors.js';
import { registerLiveRoute } from '../../src/console/live/routes.js';
import type { ConsoleDeps } from '../../src/console/deps.js';
import { createLogger } from '../../src/logger.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { markSessionPaid } from '../support/paid-session.js';
import type { SignedClient } from '../support/signed-client.js';

// The console's live stream (src/console/live/): real Server-Sent Events over HTTP from a service whose changes come
// from the API on the same database. The actor is named per request by this test's own hook (the sign-in is tested
// in the console's browser tests).

let h: ApiHarness;
let app: FastifyInstance;
let base: string;
const actors = new Map<string, ConsoleActor>();
let shopA: { merchantId: string; test: SignedClient };
let shopB: { merchantId: string; test: SignedClient };

function actor(role: 'operator' | 'merchant', merchantId: string | null): ConsoleActor {
  const a: ConsoleActor = {
    userId: `cu_${randomBytes(12).toString('hex')}`,
    email: 'x@console.test',
    role,
    merchantId,
    sessionIdHash: 'h',
    csrfToken: 't',
    ip: '127.0.0.1',
  };
  actors.set(a.userId, a);
  return a;
}

beforeAll(async () => {
  h = await startApiHarness();
  shopA = await h.merchant('A');
  shopB = await h.merchant('B');
  app = Fastify({ logger: false });
  const deps = { ops: { db: h.t.db, log: createLogger('silent') }, settings: { liveIntervalMs: 100 }, docsUrl: 'https://docs.test/errors' };
  await app.register(
    async (api) => {
      api.setErrorHandler(consoleErrorHandler(deps.docsUrl));
      api.addHook('onRequest', async (req) => {
        const id = req.headers['x-test-actor'];
        if (typeof id === 'string') req.consoleActor = actors.get(id);
      });
      await registerLiveRoute(api, deps as unknown as ConsoleDeps);
    },
    { prefix: '/api' },
  );
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app?.close();
  await h?.close();
});

/** Opens a stream and collects the topics of its `change` events. */
async function open(a: ConsoleActor, topics: string) {
  const ac = new AbortController();
  const res = await fetch(`${base}/api/live?topics=${encodeURIComponent(topics)}`, {
    headers: { 'x-test-actor': a.userId },
    signal: ac.signal,
  });
  const changes: string[] = [];
  let ready = false;
  if (res.status === 200 && res.body) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    void (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buf += decoder.decode(value, { stream: true });
          let i = buf.indexOf('\n\n');
          while (i >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            if (block.includes('event: ready')) ready = true;
            const m = /event: change\ndata: (.*)/.exec(block);
            if (m) changes.push((JSON.parse(m[1]!) as { topic: string }).topic);
            i = buf.indexOf('\n\n');
          }
        }
      } catch {
        // aborted
      }
    })();
  }
  return { res, changes, isReady: () => ready, close: () => ac.abort() };
}

const until = async (f: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function newSession(client: SignedClient): Promise<string> {
  const r = await client.post('/api/v1/checkout/sessions/create', {
    amount: '5.00',
    currency: 'USD',
    order_id: `live-${randomBytes(4).toString('hex')}`,
  });
  expect(r.status).toBe(200);
  return r.json.id as string;
}

describe('console live stream', () => {
  it('tells the operator and the owning merchant user of a session canceled through the API, and no other merchant', async () => {
    const op = await open(actor('operator', null), 'payments,overview');
    const mineA = await open(actor('merchant', shopA.merchantId), 'payments');
    const otherB = await open(actor('merchant', shopB.merchantId), 'payments');
    expect([op.res.status, mineA.res.status, otherB.res.status]).toEqual([200, 200, 200]);
    expect(op.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await until(() => op.isReady() && mineA.isReady() && otherB.isReady());
    await sleep(300); // the reader has taken its starting position
    const id = await newSession(shopA.test);
    const canceled = await shopA.test.post(`/api/v1/checkout/sessions/${id}/cancel`, {});
    expect(canceled.status).toBe(200);
    await until(() => op.changes.includes('payments') && mineA.changes.includes('payments'));
    expect(op.changes).toContain('overview');
    await sleep(400);
    expect(otherB.changes).toEqual([]);
    for (const s of [op, mineA, otherB]) s.close();
  });

  it('tells a page watching one session when its deposit lands (no outbox event), once per change', async () => {
    const id = await newSession(shopA.test);
    const watcher = await open(actor('merchant', shopA.merchantId), `payment:${id}`);
    expect(watcher.res.status).toBe(200);
    await until(watcher.isReady);
    await sleep(300);
    expect(watcher.changes).toEqual([]);
    await markSessionPaid(h.t.db, id, { receivedBase: 5_000_000n });
    await until(() => watcher.changes.length > 0);
    await sleep(400);
    expect(watcher.changes).toEqual([`payment:${id}`]);
    watcher.close();
  });

  it('refuses what the actor may not watch, and bad topics, in the spec error shape', async () => {
    const id = await newSession(shopA.test);
    const b = actor('merchant', shopB.merchantId);
    const other = await open(b, `payment:${id}`);
    expect(other.res.status).toBe(403);
    expect(((await other.res.json()) as { error: { code: string } }).error.code).toBe('not_permitted');
    const sweeps = await open(b, 'sweeps');
    expect(sweeps.res.status).toBe(403);
    const missing = await open(actor('operator', null), 'payment:cs_nothere');
    expect(missing.res.status).toBe(404);
    for (const bad of ['', 'everything', 'payments,'.repeat(12) + 'x', 'payment:a b']) {
      const r = await open(actor('operator', null), bad);
      expect(r.res.status, bad).toBe(400);
      expect(((await r.res.json()) as { error: { param: string } }).error.param).toBe('topics');
    }
    const anonymous = await fetch(`${base}/api/live?topics=payments`);
    expect(anonymous.status).toBe(401);
  });
});
