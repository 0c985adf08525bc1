import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import { insertOutboxEvents, type OutboxEventInput } from '../../src/ledger/core/outbox.js';
import { loadDeliveryJobs, recordAttempts } from '../../src/webhooks/deliveries.js';
import { collectPlans, type ExplainedStatement, explainToClient, heaviestNode } from '../support/auto-explain.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

// The worker's per-object ordering check (loadDeliveryJobs in src/webhooks/deliveries.ts) reads a few index entries
// per job, not every earlier event of the outbox, when the planner has no statistics for the outbox (migration
// 2026_12_02_0300_outbox_aggregate_seq; docs/performance.md, "Webhooks: the ordering check's plan").
//
// A burst writes thousands of events before anything analyzes outbox_events (a fresh deployment, autovacuum off or
// behind). With an index on aggregate_id alone the planner then ANDed it with a range of the primary key (seq < the
// job's seq): every earlier event, per job (24.5 million index entries over the webhook benchmark's burst of 5,000).
// Here the outbox is written as a burst is (batches of 500, one statement each), never analyzed; auto_explain sends
// the statement's plan with actual rows to this test's connection; no node may handle more than a few rows per job.

const N = 5000;
const BATCH = 20;
/** Rows one plan node may handle per job of the batch. */
const PER_JOB = 10;

let t: TestDatabase;
let pool: pg.Pool;
let db: Kysely<Database>;
const plans: ExplainedStatement[] = [];
const ids: string[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
  pool = new pg.Pool({ connectionString: t.url, max: 1 });
  pool.on('connect', (client) => {
    collectPlans(client, plans);
  });
  db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const c = await pool.connect();
  await c.query('alter table outbox_events set (autovacuum_enabled = false)'); // never analyzed, whatever the server does
  await c.query(
    `insert into merchants (id, name, webhook_url, webhook_secret_enc) values ('mch_o', 'O', 'http://127.0.0.1:9/h', 'sealed')`,
  );
  c.release();
  // A burst: N completed payments, one object each, written 500 per statement as the ledger writes a block's events.
  for (let k = 0; k < N; k += 500) {
    const events: OutboxEventInput[] = [];
    for (let i = k; i < k + 500; i++)
      events.push({
        merchantId: 'mch_o',
        mode: 'test',
        type: 'payment.completed',
        object: {
          amount: '10.00',
          status: 'completed',
          currency: 'USDT',
          exchange_rate: '1',
          order_id: `o-${i}`,
          session_id: `cs_${i}`,
          source: 'api',
        },
        aggregateId: `cs_${i}`,
      });
    await db.transaction().execute((trx) => insertOutboxEvents(trx, events));
  }
  ids.push(...(await pool.query<{ id: string }>('select id from outbox_events order by seq')).rows.map((r) => r.id));
  await pool.query(`update outbox_events set relayed_at = now()`);
  await pool.query(
    `insert into webhook_deliveries (event_id, merchant_id, mode, event_type, body)
     select id, merchant_id, mode, type, payload::text from outbox_events`,
  );
  const e = await pool.connect();
  await explainToClient(e);
  e.release();
}, 60_000);

afterAll(async () => {
  await db?.destroy();
  await t?.destroy();
});

describe('webhook ordering check: a few rows per job, with an outbox the planner has no statistics for', () => {
  it(`loadDeliveryJobs of the last ${BATCH} of ${N} events`, async () => {
    const batch = ids.slice(-BATCH);
    plans.length = 0;
    const jobs = await loadDeliveryJobs(db, batch);
    expect(jobs.map((j) => j?.event_id)).toEqual(batch);
    expect(jobs.every((j) => j?.waiting === false)).toBe(true); // each event is its object's only one
    const seen = plans.filter((p) => p.query.includes('as waiting'));
    expect(seen.length).toBe(1); // the statement's plan was seen
    const worst = heaviestNode(seen[0]!.plan, { subPlansOnly: true });
    expect(worst.work, worst.where).toBeLessThanOrEqual(PER_JOB * BATCH);
  });

  // recordAttempts (the batch's outcomes, one statement) finds its rows by key, not by reading every pending delivery
  // through webhook_deliveries_pending_idx (120-140 rows per delivery in the benchmark's burst).
  it(`recordAttempts of ${BATCH} of ${N} pending deliveries`, async () => {
    const batch = ids.slice(0, BATCH);
    plans.length = 0;
    const out = await recordAttempts(
      db,
      batch.map((eventId) => ({
        eventId,
        merchantId: 'mch_o',
        generation: 0,
        url: 'http://127.0.0.1:9/h',
        statusCode: 200,
        error: null,
        latencyMs: 5,
        excerpt: 'ok',
        outcome: 'delivered' as const,
        attempted: true,
      })),
    );
    expect(out.every((r) => r.applied && r.attempt === 1)).toBe(true);
    const seen = plans.filter((p) => p.query.includes('update webhook_deliveries d set'));
    expect(seen.length).toBe(1);
    const worst = heaviestNode(seen[0]!.plan);
    expect(worst.work, worst.where).toBeLessThanOrEqual(PER_JOB * BATCH);
  });
});
