import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainRegistry } from '../../chains/chain-registry.js';
import { registerCheckout } from '../../src/checkout/plugin.js';
import { CHECKOUT_BASE, startApiHarness, type ApiHarness } from '../support/api-harness.js';
import type { SignedClient } from '../support/signed-client.js';

// Fastify's request lines carry the business ids of the route (src/api/request-log.ts): "incoming request", "request
// completed" and "request refused" of a session, refund or subscription route name it, as the API names it; so does
// the hosted page's `:id`. The service's real logger, captured as JSON lines.

const lines: Array<Record<string, unknown>> = [];
const logStream = new Writable({
  write(chunk, _enc, cb) {
    for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
    cb();
  },
});

let h: ApiHarness;
let shop: SignedClient;
beforeAll(async () => {
  h = await startApiHarness((t) => ({
    logLevel: 'info',
    logStream,
    plugins: [(app) => registerCheckout(app, { db: t.db, adapters: new ChainRegistry(), keys: null, checkoutBaseUrl: CHECKOUT_BASE })],
  }));
  shop = (await h.merchant()).test;
});
afterAll(async () => h?.close());

/** The lines of one request (by its Request-Id), once its "request completed" line is written. */
async function linesOf(requestId: string | null): Promise<Array<Record<string, unknown>>> {
  expect(requestId).toMatch(/^req_/);
  for (let i = 0; i < 200; i++) {
    const mine = lines.filter((l) => l.request_id === requestId);
    if (mine.some((l) => l.msg === 'request completed')) return mine;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no "request completed" line for ${requestId}`);
}

const byMsg = (mine: Array<Record<string, unknown>>, msg: string) => mine.find((l) => l.msg === msg);

describe('request log lines', () => {
  it('carry session_id on the session routes, from the first line to the last', async () => {
    const created = await shop.post('/api/v1/checkout/sessions/create', { amount: '2.00', currency: 'USD', order_id: 'log-ids-1' });
    expect(created.status).toBe(200);
    const id = created.json.id as string;
    const got = await shop.get(`/api/v1/checkout/sessions/${id}`);
    expect(got.status).toBe(200);
    const mine = await linesOf(got.headers.get('request-id'));
    expect(byMsg(mine, 'incoming request')).toMatchObject({ session_id: id });
    expect(byMsg(mine, 'request completed')).toMatchObject({ session_id: id, res: { statusCode: 200 } });
  });

  it('carry refund_id and subscription_id, on refusals too', async () => {
    const refund = await shop.get('/api/v1/refunds/rf-log-unknown');
    expect(refund.status).toBe(404);
    const r = await linesOf(refund.headers.get('request-id'));
    for (const msg of ['incoming request', 'request refused', 'request completed'])
      expect(byMsg(r, msg), msg).toMatchObject({ refund_id: 'rf-log-unknown' });

    const sub = await shop.get('/api/v1/subscriptions/sub_000000000000000000000000');
    expect(sub.status).toBe(404);
    const s = await linesOf(sub.headers.get('request-id'));
    expect(byMsg(s, 'incoming request')).toMatchObject({ subscription_id: 'sub_000000000000000000000000' });
    expect(byMsg(s, 'request completed')).toMatchObject({ subscription_id: 'sub_000000000000000000000000' });
  });

  it('carry session_id on the hosted page routes without a key, and no id where the route has none', async () => {
    const created = await shop.post('/api/v1/checkout/sessions/create', { amount: '2.00', currency: 'USD', order_id: 'log-ids-2' });
    const id = created.json.id as string;
    const status = await fetch(`${h.baseUrl}/pay/${id}/status`);
    expect(status.status).toBe(200);
    const mine = await linesOf(status.headers.get('request-id'));
    expect(byMsg(mine, 'incoming request')).toMatchObject({ session_id: id });
    expect(byMsg(mine, 'request completed')).toMatchObject({ session_id: id });

    const health = await fetch(`${h.baseUrl}/healthz`);
    const plain = await linesOf(health.headers.get('request-id'));
    for (const l of plain) {
      expect(l).not.toHaveProperty('session_id');
      expect(l).not.toHaveProperty('object_id');
    }
  });
});
