import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReadDb, type ReadDbEvent } from '../../src/db/read-db.js';
import { freePort } from '../support/anvil.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';

// The quick subset of the read-replica routing (the whole scenario with a real streaming standby is
// test/integration/read-replica.test.ts, in the slow tier): no replica configured, a "replica" that is a primary (lag 0),
// and a replica nobody answers at (fallback, refusal, the circuit, the merchant export's 503).

let h: ApiHarness;
let deadUrl: string;

beforeAll(async () => {
  deadUrl = `postgres://postgres@127.0.0.1:${await freePort()}/nothing`;
  h = await startApiHarness((t) => ({
    reads: createReadDb(deadUrl, t.db, { maxLagMs: 5000, connectTimeoutMs: 500 }),
  }));
});
afterAll(async () => h?.close());

describe('reporting reads routing', () => {
  it('without READ_DATABASE_URL every read is on the primary', async () => {
    const events: ReadDbEvent[] = [];
    const reads = createReadDb(undefined, h.t.db, { maxLagMs: 5000, onEvent: (e) => events.push(e) });
    expect(reads.hasReplica).toBe(false);
    expect(await reads.read(async (db) => db === h.t.db)).toBe(true);
    expect(events).toEqual([{ kind: 'routed', target: 'primary', reason: 'no_replica' }]);
  });

  it('a reachable server that is not in recovery counts as caught up (lag 0) and serves the reads', async () => {
    const events: ReadDbEvent[] = [];
    const reads = createReadDb(h.t.url, h.t.db, { maxLagMs: 0, onEvent: (e) => events.push(e) });
    try {
      expect(await reads.read(async (db) => db !== h.t.db)).toBe(true);
      expect(reads.lagMs()).toBe(0);
      expect(events).toContainEqual({ kind: 'lag', ms: 0 });
      expect(events).toContainEqual({ kind: 'routed', target: 'replica', reason: 'replica' });
    } finally {
      await reads.destroy();
    }
  });

  it('a replica that does not answer: fallback reads the primary, fail refuses, and it is not retried per read', async () => {
    const events: ReadDbEvent[] = [];
    const reads = createReadDb(deadUrl, h.t.db, { maxLagMs: 5000, connectTimeoutMs: 500, onEvent: (e) => events.push(e) });
    try {
      expect(await reads.read(async (db) => db === h.t.db)).toBe(true);
      expect(events.filter((e) => e.kind === 'down')).toHaveLength(1);
      expect(reads.lagMs()).toBeNull();
      await expect(reads.read(async () => 1, 'fail')).rejects.toMatchObject({ status: 503, code: 'replica_unavailable' });
      await reads.read(async () => 1);
      expect(events.filter((e) => e.kind === 'down')).toHaveLength(1);
      expect(events.filter((e) => e.kind === 'routed')).toEqual([
        { kind: 'routed', target: 'primary', reason: 'down' },
        { kind: 'routed', target: 'refused', reason: 'down' },
        { kind: 'routed', target: 'primary', reason: 'down' },
      ]);
      // The error names nothing secret (no URL, no password).
      const down = events.find((e) => e.kind === 'down') as { error: string };
      expect(down.error).not.toContain('postgres://');
    } finally {
      await reads.destroy();
    }
  });

  it("a merchant export answers 503 replica_unavailable in the spec's error shape while the replica is down", async () => {
    const shop = await h.merchant('Exporter');
    const r = await shop.test.get('/api/v1/exports/sessions?since=0&format=csv');
    expect(r.status).toBe(503);
    expect(r.json.error).toMatchObject({ type: 'api_error', code: 'replica_unavailable' });
    // The money path is unaffected: a session is created and read.
    const created = await shop.test.post('/api/v1/checkout/sessions/create', { amount: '1.00', currency: 'USD', order_id: 'o-1' });
    expect(created.status).toBe(200);
    expect((await shop.test.get(`/api/v1/checkout/sessions/${created.json.id}`)).status).toBe(200);
  });
});
