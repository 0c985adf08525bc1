import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryQueue, type DeliveryQueue } from '../../src/webhooks/queue.js';
import { reconcileDeliveries, relayBatch, startOutboxRelay } from '../../src/webhooks/index.js';
import { eventually, startWebhookHarness, type WebhookHarness } from './webhooks-harness.js';

// The relay alone (no worker): what lands in BullMQ and in webhook_deliveries.

let h: WebhookHarness;
let dq: DeliveryQueue;
let merchantId: string;
const stops: Array<{ stop(): Promise<void> }> = [];

const counts = async () => {
  const { rows } = await sql<{ relayed: number; unrelayed: number; deliveries: number }>`
    select (select count(*) from outbox_events where relayed_at is not null)::int as relayed,
           (select count(*) from outbox_events where relayed_at is null)::int as unrelayed,
           (select count(*) from webhook_deliveries)::int as deliveries`.execute(h.db);
  return rows[0]!;
};
const jobCount = async () => {
  const c = await dq.queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
  return Object.values(c).reduce((a, b) => a + b, 0);
};

beforeAll(async () => {
  h = await startWebhookHarness();
  dq = createDeliveryQueue(h.redis, h.prefix);
  merchantId = (await h.merchant('http://127.0.0.1:9/never')).id;
});
afterEach(async () => {
  for (const s of stops.splice(0)) await s.stop();
  await dq.queue.obliterate({ force: true });
  await sql`truncate webhook_delivery_attempts, webhook_deliveries, outbox_events`.execute(h.db);
});
afterAll(async () => {
  await dq?.close();
  await h?.close();
});

describe('outbox relay', () => {
  it('two relays share the work without relaying an event twice', async () => {
    const ids = await h.emit(merchantId, 300);
    stops.push(
      startOutboxRelay({ db: h.db, redis: h.redis, prefix: h.prefix, batchSize: 20, pollIntervalMs: 50 }),
      startOutboxRelay({ db: h.db, redis: h.redis, prefix: h.prefix, batchSize: 20, pollIntervalMs: 50 }),
    );
    await eventually(counts, (c) => c.relayed === 300);
    expect(await counts()).toEqual({ relayed: 300, unrelayed: 0, deliveries: 300 });
    expect(await jobCount()).toBe(300);
    const job = await dq.queue.getJob(ids[0]!);
    expect(job?.data).toEqual({ eventId: ids[0], generation: 0 });
    // Each delivery body is the outbox payload's text, frozen.
    const { rows } = await sql<{ same: boolean }>`
      select bool_and(d.body = o.payload::text) as same from webhook_deliveries d join outbox_events o on o.id = d.event_id`.execute(h.db);
    expect(rows[0]!.same).toBe(true);
  });

  it('is woken by NOTIFY on commit, long before its poll interval', async () => {
    // The poll comes only after POLL_MS: relayed before then, it was NOTIFY. No tighter bound on the time, which a
    // loaded machine would move.
    const POLL_MS = 600_000;
    stops.push(startOutboxRelay({ db: h.db, redis: h.redis, prefix: h.prefix, databaseUrl: h.t.url, pollIntervalMs: POLL_MS }));
    await new Promise((r) => setTimeout(r, 300)); // LISTEN established, first empty pass done
    const started = Date.now();
    await h.emit(merchantId, 3);
    await eventually(counts, (c) => c.relayed === 3, 60_000);
    expect(Date.now() - started).toBeLessThan(POLL_MS);
  }, 90_000);

  it('finds an event whose transaction commits after a later event was relayed', async () => {
    const conn = await h.t.db.connection().execute(async (c) => {
      await sql`begin`.execute(c);
      const late = await sql<{ id: string }>`
        insert into outbox_events (id, merchant_id, mode, type, payload)
        values (next_event_id(), ${merchantId}, 'test', 'payment.completed', '{"id":"x"}'::jsonb) returning id, seq`.execute(c);
      // Meanwhile a later event commits and is relayed.
      const [later] = await h.emit(merchantId);
      expect(await relayBatch(h.db, dq.queue, 100)).toBe(1);
      await sql`commit`.execute(c);
      return { late: late.rows[0]!.id, later: later! };
    });
    expect(await relayBatch(h.db, dq.queue, 100)).toBe(1);
    expect(await dq.queue.getJob(conn.late)).toBeDefined();
    expect(await dq.queue.getJob(conn.later)).toBeDefined();
    expect((await counts()).unrelayed).toBe(0);
  });

  it('a crash between enqueue and commit leaves the rows unrelayed; the next pass adds no second job or event', async () => {
    const ids = await h.emit(merchantId, 10);
    await expect(
      relayBatch(h.db, dq.queue, 100, async () => {
        throw new Error('crash after enqueue');
      }),
    ).rejects.toThrow('crash after enqueue');
    expect(await counts()).toEqual({ relayed: 0, unrelayed: 10, deliveries: 0 });
    expect(await jobCount()).toBe(10);
    expect(await relayBatch(h.db, dq.queue, 100)).toBe(10);
    expect(await counts()).toEqual({ relayed: 10, unrelayed: 0, deliveries: 10 });
    expect(await jobCount()).toBe(10);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from outbox_events`.execute(h.db);
    expect(rows[0]!.n).toBe(ids.length);
  });

  it('after Redis loses its jobs, the reconciler re-enqueues overdue pending deliveries (and only those)', async () => {
    const ids = await h.emit(merchantId, 5);
    await relayBatch(h.db, dq.queue, 100);
    await dq.queue.obliterate({ force: true });
    expect(await jobCount()).toBe(0);
    expect(await reconcileDeliveries(h.db, dq.queue, 60_000)).toBe(0); // not overdue yet
    await sql`update webhook_deliveries set next_attempt_at = now() - interval '10 minutes' where event_id = any(${ids.slice(0, 4)})`.execute(
      h.db,
    );
    await sql`update webhook_deliveries set status = 'delivered' where event_id = ${ids[0]!}`.execute(h.db);
    expect(await reconcileDeliveries(h.db, dq.queue, 60_000)).toBe(3);
    expect(await jobCount()).toBe(3);
    expect(await reconcileDeliveries(h.db, dq.queue, 60_000)).toBe(0); // jobs exist now
  });
});
