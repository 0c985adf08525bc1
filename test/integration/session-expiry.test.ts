import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExpiryScheduler, startExpiryWorker, sweepOverdue } from '../../src/jobs/session-expiry.js';
import type { ExpiryDeps } from '../../src/ledger/payments/sessions.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { REDIS_URL } from '../support/env.js';
import type { SignedClient } from '../support/signed-client.js';

let h: ApiHarness;
let shop: SignedClient;
let merchantId: string;
let redis: Redis;
const prefix = `sp_exp_${randomBytes(4).toString('hex')}`;
let scheduler: ReturnType<typeof createExpiryScheduler>;
let n = 0;

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  scheduler = createExpiryScheduler({ connection: redis, prefix });
  h = await startApiHarness({ onSessionCreated: (s) => scheduler.schedule(s) });
  const m = await h.merchant();
  shop = m.test;
  merchantId = m.merchantId;
  await h.t.db.updateTable('merchants').set({ session_lifetime_seconds: 2 }).where('id', '=', merchantId).execute();
});
afterAll(async () => {
  await scheduler.close();
  await h.close();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

async function waitFor<T>(f: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A deployment without chains: nothing holds an expiry back unless a test says so. */
const noChains: ExpiryDeps = { tokenDecimals: () => undefined, mayStillBePaid: async () => false };

const events = (id: string) => h.t.db.selectFrom('outbox_events').selectAll().where('aggregate_id', '=', id).execute();

describe('session expiry', () => {
  it('expires a session at expires_at through its delayed job and writes payment.expired once', async () => {
    const worker = await startExpiryWorker({ connection: redis, prefix }, { db: h.t.db, ...noChains, sweepIntervalMs: 3_600_000 });
    try {
      const c = (await shop.post('/api/v1/checkout/sessions/create', { amount: '4.00', currency: 'USD', order_id: `e-${n++}` })).json;
      expect(c.expires_at - c.created).toBe(2);
      const row = await waitFor(async () => {
        const s = await h.t.db.selectFrom('payment_sessions').selectAll().where('id', '=', c.id).executeTakeFirstOrThrow();
        return s.status === 'expired' ? s : undefined;
      });
      expect(row.expired_at!.getTime()).toBeGreaterThanOrEqual(c.expires_at * 1000);
      const evs = await events(c.id);
      expect(evs).toHaveLength(1);
      expect(evs[0]!.type).toBe('payment.expired');
      expect((evs[0]!.payload as any).data.object).toEqual({
        amount: '',
        status: 'expired',
        currency: '',
        exchange_rate: '1',
        order_id: c.metadata.order_id,
        session_id: c.id,
        source: 'api',
        // Extension (issue 16 item 5): what the session received; nothing here.
        amount_received: '0.00',
        amount_received_base: '0',
        received_currency: null,
        payments: [],
      });
      const got = await shop.get(`/api/v1/checkout/sessions/${c.id}`);
      expect(got.json).toMatchObject({ payment_status: 'unpaid', status: 'expired' });
      expect((await shop.post(`/api/v1/checkout/sessions/${c.id}/cancel`)).json.error.code).toBe('session_expired');
    } finally {
      await worker.stop();
    }
  });

  it('sweeps overdue sessions whose job was lost, and is idempotent', async () => {
    const c = (await shop.post('/api/v1/checkout/sessions/create', { amount: '1', currency: 'USD', order_id: `e-${n++}` })).json;
    await redis.del(...(await redis.keys(`${prefix}:*`))); // Redis lost everything
    await h.t.db
      .updateTable('payment_sessions')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', c.id)
      .execute();
    const [a, b] = await Promise.all([sweepOverdue(h.t.db, noChains), sweepOverdue(h.t.db, noChains)]);
    expect(a + b).toBeGreaterThanOrEqual(1);
    expect((await events(c.id)).filter((e) => e.type === 'payment.expired')).toHaveLength(1);
  });

  it('defers expiry while the chain side says money may still arrive', async () => {
    const c = (await shop.post('/api/v1/checkout/sessions/create', { amount: '1', currency: 'USD', order_id: `e-${n++}` })).json;
    await h.t.db
      .updateTable('payment_sessions')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', c.id)
      .execute();
    await sweepOverdue(h.t.db, { ...noChains, mayStillBePaid: async (_trx, s) => s.id === c.id });
    expect((await shop.get(`/api/v1/checkout/sessions/${c.id}`)).json.status).toBe('open');
    await sweepOverdue(h.t.db, { ...noChains, mayStillBePaid: async () => false });
    expect((await shop.get(`/api/v1/checkout/sessions/${c.id}`)).json.status).toBe('expired');
  });
});
