import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleHarness, type ConsoleHarness } from '../support/console-harness.js';

// The console's overview: per network, token and day the paid volume (decimal strings) and counts, end-state rates,
// refunds in flight, failing webhook endpoints; operators see every merchant (or one), merchant users only theirs and
// no operator parts; with no chain configured the wallets are an empty list, never a 5xx.

let h: ConsoleHarness;
let a: string;
let b: string;

async function session(merchantId: string, status: 'open' | 'paid' | 'expired' | 'canceled', amountMinor: bigint, daysAgo = 0) {
  const at = sql`now() - ${`${daysAgo} days`}::interval`;
  const id = `cs_${Math.random().toString(36).slice(2)}`;
  await sql`
    insert into payment_sessions (id, merchant_id, mode, order_id, amount_minor, currency, target_currency, target_amount_minor,
      hd_account, network, token, status, created_at, expires_at, paid_at, expired_at, canceled_at, quote_usdt_minor)
    values (${id}, ${merchantId}, 'test', ${id}, ${amountMinor}, 'USD', 'USDT', ${amountMinor},
      0, 'ethereum', 'USDT', ${status}, ${at}, ${at} + interval '1 hour',
      ${status === 'paid' ? at : null}, ${status === 'expired' ? at : null}, ${status === 'canceled' ? at : null}, ${amountMinor})`.execute(
    h.t.db,
  );
}

async function delivery(merchantId: string, status: 'delivered' | 'failed', secondsAgo: number) {
  const id = `evt_${Math.random().toString(36).slice(2)}`;
  const at = sql`now() - ${`${secondsAgo} seconds`}::interval`;
  await sql`insert into outbox_events (id, merchant_id, mode, type, payload, created_at)
    values (${id}, ${merchantId}, 'test', 'checkout.session.completed', '{}'::jsonb, ${at})`.execute(h.t.db);
  await sql`insert into webhook_deliveries (event_id, merchant_id, mode, event_type, body, status, created_at, updated_at, delivered_at, failed_at, last_error)
    values (${id}, ${merchantId}, 'test', 'checkout.session.completed', '{}', ${status}, ${at}, ${at},
      ${status === 'delivered' ? at : null}, ${status === 'failed' ? at : null}, ${status === 'failed' ? 'HTTP 500' : null})`.execute(
    h.t.db,
  );
}

beforeAll(async () => {
  h = await startConsoleHarness();
  a = (await h.merchant('Overview A')).merchantId;
  b = (await h.merchant('Overview B')).merchantId;
  await session(a, 'paid', 1250n);
  await session(a, 'paid', 750n);
  await session(a, 'expired', 1_000_000n);
  await session(a, 'paid', 99_000_000n, 40); // outside the 30 days
  await session(b, 'paid', 1_000_000n, 2);
  await session(b, 'canceled', 1_000_000n, 2);
  // B: its last five deliveries failed (one delivered before them); A: four failed, then one delivered.
  await delivery(b, 'delivered', 100);
  for (const s of [50, 40, 30, 20, 10]) await delivery(b, 'failed', s);
  for (const s of [50, 40, 30, 20]) await delivery(a, 'failed', s);
  await delivery(a, 'delivered', 5);
});
afterAll(async () => h?.close());

describe('GET /api/overview', () => {
  it('gives an operator every merchant: volume per day as decimal strings, counts, rates, operator parts', async () => {
    const r = await h.call(h.operator, 'GET', '/api/overview');
    expect(r.status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    expect(r.json.days.find((d: { day: string }) => d.day === today)).toMatchObject({
      network: 'ethereum',
      token: 'USDT',
      volume: '20.00',
      paid: 2,
    });
    expect(r.json.days.reduce((n: number, d: { paid: number }) => n + d.paid, 0)).toBe(3);
    expect(r.json.rates).toMatchObject({ created: 5, paid: 3, expired: 1, canceled: 1, paid_rate: 0.6 });
    expect(r.json.refunds_in_flight).toEqual({ count: 0 });
    expect(r.json.failing_webhook_endpoints).toHaveLength(1);
    expect(r.json.failing_webhook_endpoints[0]).toMatchObject({ merchant_id: b, failed_deliveries: 5, last_error: 'HTTP 500' });
    expect(r.json.watchers).toEqual([]);
    expect(r.json.wallets).toEqual([]);
    expect(r.json.last_reconcile).toEqual([]);
  });

  it('narrows an operator to one merchant, and a merchant user to its own without the operator parts', async () => {
    const one = await h.call(h.operator, 'GET', `/api/overview?merchant_id=${b}`);
    expect(one.json.rates).toMatchObject({ created: 2, paid: 1, canceled: 1 });
    const mine = await h.call(h.merchantUser(a), 'GET', '/api/overview');
    expect(mine.status).toBe(200);
    expect(mine.json.merchant_id).toBe(a);
    expect(mine.json.rates).toMatchObject({ created: 3, paid: 2, expired: 1 });
    expect(mine.json.wallets).toBeNull();
    expect(mine.json.failing_webhook_endpoints).toEqual([]);
    expect(mine.json.last_reconcile).toBeNull();
  });

  it("refuses a merchant user another merchant's overview (403) and bad input (400)", async () => {
    expect((await h.call(h.merchantUser(a), 'GET', `/api/overview?merchant_id=${b}`)).status).toBe(403);
    expect((await h.call(h.operator, 'GET', '/api/overview?days=7')).status).toBe(400);
    expect((await h.call(null, 'GET', '/api/overview')).status).toBe(401);
  });
});
