import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleHarness, type ConsoleHarness } from '../support/console-harness.js';

// The console's webhooks API over a real database and Redis: endpoint URL (the CLI's URL policy), secret rotation
// (shown once, never again), the delivery log with attempts, resends; scoping of merchant users; audit rows.

let h: ConsoleHarness;
let a: { merchantId: string };
let b: { merchantId: string };

async function delivery(
  merchantId: string,
  id: string,
  status: 'delivered' | 'failed' | 'pending',
  o: { excerpt?: string; type?: string } = {},
) {
  await h.t.db
    .insertInto('outbox_events')
    .values({
      id,
      merchant_id: merchantId,
      mode: 'test',
      type: o.type ?? 'checkout.session.completed',
      aggregate_id: null,
      payload: JSON.stringify({ id }),
      relayed_at: new Date(),
    })
    .execute();
  await h.t.db
    .insertInto('webhook_deliveries')
    .values({
      event_id: id,
      merchant_id: merchantId,
      mode: 'test',
      event_type: o.type ?? 'checkout.session.completed',
      body: JSON.stringify({ id }),
      status,
      attempts: status === 'pending' ? 0 : 1,
      last_status_code: status === 'failed' ? 500 : status === 'delivered' ? 200 : null,
      failed_at: status === 'failed' ? new Date() : null,
      delivered_at: status === 'delivered' ? new Date() : null,
    })
    .execute();
  if (status !== 'pending') {
    await h.t.db
      .insertInto('webhook_delivery_attempts')
      .values({
        event_id: id,
        merchant_id: merchantId,
        generation: 0,
        attempt: 1,
        url: 'https://example.com/hook',
        status_code: status === 'failed' ? 500 : 200,
        error: null,
        latency_ms: 42,
        response_excerpt: o.excerpt ?? null,
        outcome: status === 'failed' ? 'failed' : 'delivered',
      })
      .execute();
  }
}

const text = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x));

async function auditRows(action: string) {
  return h.t.db.selectFrom('console_audit').selectAll().where('action', '=', action).orderBy('id').execute();
}

beforeAll(async () => {
  h = await startConsoleHarness();
  a = await h.merchant('Shop A');
  b = await h.merchant('Shop B');
  await delivery(a.merchantId, 'evt_a1', 'delivered', { excerpt: 'ok'.repeat(150) });
  await delivery(a.merchantId, 'evt_a2', 'failed', { excerpt: 'boom', type: 'refund.failed' });
  await delivery(a.merchantId, 'evt_a3', 'pending');
  await delivery(b.merchantId, 'evt_b1', 'failed');
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe('console webhooks: endpoint', () => {
  it('shows the endpoint with a secret prefix only, and refuses another merchant (403) and an unnamed merchant for an operator (400)', async () => {
    const user = h.merchantUser(a.merchantId);
    const r = await h.call(user, 'GET', '/api/webhooks/endpoint');
    expect(r.status).toBe(200);
    expect(r.json.merchant_id).toBe(a.merchantId);
    expect(r.json.secret_prefix).toMatch(/^whsec_[A-Za-z0-9]{4}$/);
    expect(JSON.stringify(r.json)).not.toMatch(/whsec_[A-Za-z0-9]{5,}/);
    expect((await h.call(user, 'GET', `/api/webhooks/endpoint?merchant_id=${b.merchantId}`)).status).toBe(403);
    const op = await h.call(h.operator, 'GET', '/api/webhooks/endpoint');
    expect(op.status).toBe(400);
    expect(op.json.error.param).toBe('merchant_id');
    expect((await h.call(h.operator, 'GET', `/api/webhooks/endpoint?merchant_id=${b.merchantId}`)).json.merchant_id).toBe(b.merchantId);
  });

  it('sets a URL under the endpoint rules, refuses a private one for live mode (nothing changed), audits the change', async () => {
    const user = h.merchantUser(a.merchantId);
    const bad = await h.call(user, 'PUT', '/api/webhooks/endpoint', { url: 'http://127.0.0.1:9/hook' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('url_refused');
    const m0 = await h.t.db.selectFrom('merchants').select('webhook_url').where('id', '=', a.merchantId).executeTakeFirstOrThrow();
    expect(m0.webhook_url).toBeNull();
    const ok = await h.call(user, 'PUT', '/api/webhooks/endpoint', { url: 'https://hooks.test.invalid/x', test_only: true });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ merchant_id: a.merchantId, url: 'https://hooks.test.invalid/x', live_deliverable: false });
    const m1 = await h.t.db.selectFrom('merchants').select('webhook_url').where('id', '=', a.merchantId).executeTakeFirstOrThrow();
    expect(m1.webhook_url).toBe('https://hooks.test.invalid/x');
    const rows = await auditRows('webhook.set_url');
    expect(rows.at(-1)).toMatchObject({
      merchant_id: a.merchantId,
      before: { url: null },
      after: { url: 'https://hooks.test.invalid/x' },
      actor_id: user.userId,
    });
    const missingCsrf = await h.call(user, 'PUT', '/api/webhooks/endpoint', { url: null }, { csrf: 'nope' });
    expect(missingCsrf.status).toBe(403);
  });

  it('rotates the secret: the new secret is shown once, the previous one keeps signing for the overlap, the audit has no secret', async () => {
    const user = h.merchantUser(a.merchantId);
    const r = await h.call(user, 'POST', '/api/webhooks/rotate-secret', { overlap_hours: 2 });
    expect(r.status).toBe(200);
    expect(r.json.secret).toMatch(/^whsec_/);
    expect(Date.parse(r.json.previous_secret_expires_at)).toBeGreaterThan(Date.now() + 3600_000);
    const after = await h.call(user, 'GET', '/api/webhooks/endpoint');
    expect(after.json.secret_prefix).toBe(r.json.secret.slice(0, 10));
    expect(after.json.previous_secret_expires_at).toBe(r.json.previous_secret_expires_at);
    const rows = await auditRows('webhook.rotate_secret');
    expect(rows).toHaveLength(1);
    expect(text(rows[0])).not.toContain(r.json.secret);
    expect((await h.call(user, 'POST', '/api/webhooks/rotate-secret', { overlap_hours: 10_000 })).status).toBe(400);
    expect(await auditRows('webhook.rotate_secret')).toHaveLength(1);
  });
});

describe('console webhooks: deliveries', () => {
  it('lists deliveries newest first with latency, code and a 200-character excerpt; pages by cursor; filters', async () => {
    const page1 = await h.call(h.operator, 'GET', '/api/webhooks/deliveries?limit=2');
    expect(page1.status).toBe(200);
    expect(page1.json.data.map((d: { event_id: string }) => d.event_id)).toEqual(['evt_b1', 'evt_a3']);
    expect(page1.json.next_cursor).toEqual(expect.any(String));
    const page2 = await h.call(h.operator, 'GET', `/api/webhooks/deliveries?limit=2&cursor=${page1.json.next_cursor}`);
    expect(page2.json.data.map((d: { event_id: string }) => d.event_id)).toEqual(['evt_a2', 'evt_a1']);
    expect(page2.json.next_cursor).toBeNull();
    const a1 = page2.json.data[1];
    expect(a1).toMatchObject({ status: 'delivered', attempts: 1, latency_ms: 42, last_response_code: 200 });
    expect(a1.body_excerpt).toHaveLength(200);
    const failed = await h.call(h.operator, 'GET', `/api/webhooks/deliveries?status=failed&merchant_id=${a.merchantId}`);
    expect(failed.json.data.map((d: { event_id: string }) => d.event_id)).toEqual(['evt_a2']);
    const typed = await h.call(h.operator, 'GET', '/api/webhooks/deliveries?type=refund.failed');
    expect(typed.json.data.map((d: { event_id: string }) => d.event_id)).toEqual(['evt_a2']);
  });

  it("scopes a merchant user to its own deliveries, refuses another merchant's (403) and bad input (400)", async () => {
    const user = h.merchantUser(b.merchantId);
    const r = await h.call(user, 'GET', '/api/webhooks/deliveries');
    expect(r.json.data.map((d: { event_id: string }) => d.event_id)).toEqual(['evt_b1']);
    expect((await h.call(user, 'GET', `/api/webhooks/deliveries?merchant_id=${a.merchantId}`)).status).toBe(403);
    expect((await h.call(user, 'GET', '/api/webhooks/deliveries/evt_a1')).status).toBe(403);
    expect((await h.call(user, 'GET', '/api/webhooks/deliveries?status=lost')).status).toBe(400);
    expect((await h.call(user, 'GET', '/api/webhooks/deliveries?limit=0')).status).toBe(400);
    expect((await h.call(user, 'GET', '/api/webhooks/deliveries?cursor=%21%21')).status).toBe(400);
    expect((await h.call(null, 'GET', '/api/webhooks/deliveries')).status).toBe(401);
  });

  it('shows one delivery with its body and attempts', async () => {
    const r = await h.call(h.merchantUser(a.merchantId), 'GET', '/api/webhooks/deliveries/evt_a2');
    expect(r.status).toBe(200);
    expect(r.json.body).toBe(JSON.stringify({ id: 'evt_a2' }));
    expect(r.json.attempts).toHaveLength(1);
    expect(r.json.attempts[0]).toMatchObject({ attempt: 1, status_code: 500, outcome: 'failed', response_excerpt: 'boom' });
    expect((await h.call(h.operator, 'GET', '/api/webhooks/deliveries/evt_nope')).status).toBe(404);
  });

  it('resends one event in a new generation and audits it; refuses another merchant (403, nothing changed) and an unknown event (404)', async () => {
    const other = await h.call(h.merchantUser(b.merchantId), 'POST', '/api/webhooks/deliveries/evt_a1/resend');
    expect(other.status).toBe(403);
    const d0 = await h.t.db
      .selectFrom('webhook_deliveries')
      .select(['status', 'generation'])
      .where('event_id', '=', 'evt_a1')
      .executeTakeFirstOrThrow();
    expect(d0).toEqual({ status: 'delivered', generation: 0 });
    const r = await h.call(h.merchantUser(a.merchantId), 'POST', '/api/webhooks/deliveries/evt_a1/resend');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ event_id: 'evt_a1', result: 'resent', generation: 1, job_id: 'evt_a1-r1' });
    const d1 = await h.t.db
      .selectFrom('webhook_deliveries')
      .select(['status', 'generation'])
      .where('event_id', '=', 'evt_a1')
      .executeTakeFirstOrThrow();
    expect(d1).toEqual({ status: 'pending', generation: 1 });
    const job = await h.ops.redis.exists(`${h.ops.redisPrefix}:webhook-deliveries:evt_a1-r1`);
    expect(job).toBe(1);
    expect((await auditRows('webhook.resend')).at(-1)).toMatchObject({ object_id: 'evt_a1', merchant_id: a.merchantId });
    expect((await h.call(h.operator, 'POST', '/api/webhooks/deliveries/evt_nope/resend')).status).toBe(404);
  });

  it('resends every failure since a time, only the merchant user’s own', async () => {
    const since = new Date(Date.now() - 3600_000).toISOString();
    expect((await h.call(h.merchantUser(a.merchantId), 'POST', '/api/webhooks/resend-failed', { since: 'yesterday' })).status).toBe(400);
    const r = await h.call(h.merchantUser(a.merchantId), 'POST', '/api/webhooks/resend-failed', { since });
    expect(r.status).toBe(200);
    expect(r.json.resent).toBe(1);
    expect(r.json.events.map((e: { event_id: string }) => e.event_id)).toEqual(['evt_a2']);
    const b1 = await h.t.db.selectFrom('webhook_deliveries').select('status').where('event_id', '=', 'evt_b1').executeTakeFirstOrThrow();
    expect(b1.status).toBe('failed');
    expect((await auditRows('webhook.resend_failed')).at(-1)).toMatchObject({ merchant_id: a.merchantId, after: { resent: 1 } });
  });
});
