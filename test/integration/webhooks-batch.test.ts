import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertOutboxEvent } from '../../src/ledger/core/outbox.js';
import { createBatcher } from '../../src/webhooks/batcher.js';
import { ensureDeliveryRow, loadDeliveryJobs, recordAttempts, type AttemptRecord } from '../../src/webhooks/deliveries.js';
import { startWebhookHarness, type WebhookHarness } from './webhooks-harness.js';

// The worker's group commit (issue 22): many deliveries loaded, and many attempts recorded, in one round trip each,
// with the same per-delivery guarantees as one at a time (generation and status conditions, per-object order).

let h: WebhookHarness;
let merchantId: string;

beforeAll(async () => {
  h = await startWebhookHarness();
  merchantId = (await h.merchant('http://127.0.0.1:9/hooks')).id;
});
afterAll(async () => {
  await h?.close();
});

const emitAbout = (aggregateId: string, n: number) =>
  h.db.transaction().execute(async (trx) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++)
      ids.push(await insertOutboxEvent(trx, { merchantId, mode: 'test', type: 'payment.completed', object: { i }, aggregateId }));
    return ids;
  });
const relayed = async (ids: string[]) => {
  for (const id of ids) await ensureDeliveryRow(h.db, id);
  await sql`update outbox_events set relayed_at = now() where id = any(${ids}::text[])`.execute(h.db);
};
const rec = (eventId: string, over: Partial<AttemptRecord>): AttemptRecord => ({
  eventId,
  merchantId,
  generation: 0,
  url: 'http://127.0.0.1:9/hooks',
  statusCode: 200,
  error: null,
  latencyMs: 3,
  excerpt: 'ok',
  outcome: 'delivered',
  attempted: true,
  ...over,
});

describe('batched delivery state', () => {
  it('loads many deliveries in one call, in order, with per-object ordering and unknown ids as undefined', async () => {
    const [first, second] = await emitAbout('cs_batch_order', 2);
    const [other] = await emitAbout('cs_batch_other', 1);
    await relayed([first!, second!, other!]);
    const jobs = await loadDeliveryJobs(h.db, [second!, 'evt_unknown', first!, other!]);
    expect(jobs.map((j) => j?.event_id)).toEqual([second, undefined, first, other]);
    expect(jobs.map((j) => j?.waiting)).toEqual([true, undefined, false, false]);
    expect(jobs[0]!.aggregate_id).toBe('cs_batch_order');
    expect(jobs[0]!.body).toContain(second!);
    // Once the first event is delivered, the second is free to go.
    await recordAttempts(h.db, [rec(first!, {})]);
    expect((await loadDeliveryJobs(h.db, [second!]))[0]!.waiting).toBe(false);
  });

  it('records many attempts in one statement, each under its own generation and status condition', async () => {
    const ids = await h.emit(merchantId, 4);
    await relayed(ids);
    const [a, b, c, d] = ids as [string, string, string, string];
    await sql`update webhook_deliveries set status = 'delivered' where event_id = ${d}`.execute(h.db);
    const next = new Date(Date.now() + 60_000);
    const out = await recordAttempts(h.db, [
      rec(a, {}),
      rec(b, { outcome: 'retrying', statusCode: 500, error: 'http_500', nextAttemptAt: next }),
      rec(c, { generation: 7 }), // a stale job: logged, not applied
      rec(d, {}), // already delivered: logged, not applied
    ]);
    expect(out).toEqual([
      { applied: true, attempt: 1 },
      { applied: true, attempt: 1 },
      { applied: false, attempt: 1 },
      { applied: false, attempt: 1 },
    ]);
    const { rows } = await sql<{ event_id: string; status: string; attempts: number; next_ms: number; last_error: string | null }>`
      select event_id, status, attempts, (extract(epoch from next_attempt_at) * 1000)::float8 as next_ms, last_error
      from webhook_deliveries where event_id = any(${ids}::text[])`.execute(h.db);
    const by = new Map(rows.map((r) => [r.event_id, r]));
    expect(by.get(a)).toMatchObject({ status: 'delivered', attempts: 1, last_error: null });
    expect(by.get(b)).toMatchObject({ status: 'pending', attempts: 1, last_error: 'http_500' });
    expect(Math.abs(by.get(b)!.next_ms - next.getTime())).toBeLessThan(2);
    expect(by.get(c)).toMatchObject({ status: 'pending', attempts: 0 });
    const { rows: log } = await sql<{ event_id: string; outcome: string }>`
      select event_id, outcome from webhook_delivery_attempts where event_id = any(${ids}::text[]) order by id`.execute(h.db);
    expect(log).toEqual([
      { event_id: a, outcome: 'delivered' },
      { event_id: b, outcome: 'retrying' },
      { event_id: c, outcome: 'delivered' },
      { event_id: d, outcome: 'delivered' },
    ]);
  });

  it('the batcher groups concurrent calls, never puts one key twice in a batch, and answers each caller its own result', async () => {
    const batches: string[][] = [];
    const b = createBatcher<string, string>({
      execute: async (items) => {
        batches.push(items);
        return items.map((i) => `r:${i}`);
      },
      key: (i) => i.split('#')[0]!,
      maxBatch: 3,
    });
    const results = await Promise.all(['a#1', 'b', 'a#2', 'c', 'd'].map((i) => b.run(i)));
    expect(results).toEqual(['r:a#1', 'r:b', 'r:a#2', 'r:c', 'r:d']);
    expect(batches).toEqual([
      ['a#1', 'b', 'c'],
      ['a#2', 'd'],
    ]);
    const failing = createBatcher<string, string>({ execute: () => Promise.reject(new Error('db down')), key: (i) => i });
    await expect(failing.run('x')).rejects.toThrow('db down');
  });
});
