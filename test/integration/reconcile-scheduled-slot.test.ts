import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../src/db/database.js';
import { claimReconcileSlot, watcherFinalHeight } from '../../src/ledger/journal/reconcile-runs.js';
import { chainKey } from '../../src/ledger/core/chain-ref.js';
import { startReconcileJob } from '../../src/reconcile/job.js';
import { reconcile } from '../../src/reconcile/reconcile.js';
import { startServiceHarness, type ServiceHarness } from '../support/service-harness.js';

// The scheduled reconcile is single-flight across processes (docs/journal.md, "Reconcile"): every worker's scheduler
// ticks at the same slot boundaries (multiples of the interval) and one of them claims each slot in the ledger, so two
// schedulers started at different moments store one run per slot between them; a holder that dies mid-run (its
// PostgreSQL session gone) keeps no lock, and the next slot runs.
// Two schedulers as two worker processes would run them: each its own connection pool on the same database.

const INTERVAL_MS = 4000;
/** The reconcile locks' class (src/ledger/journal/reconcile-runs.ts: 'RECN'). */
const RECONCILE_LOCK_CLASS = 0x5245_434e;
const chain = { network: 'ethereum', mode: 'test' as const };
const quiet = { info() {}, warn() {}, error() {} };

let h: ServiceHarness;
const pools: Db[] = [];
const jobs: Array<{ stop(): Promise<void> }> = [];

beforeAll(async () => {
  h = await startServiceHarness();
  await h.until(async () => ((await watcherFinalHeight(h.t.db, chain)) !== null ? true : undefined), 60_000);
}, 120_000);
afterAll(async () => {
  for (const j of jobs) await j.stop();
  for (const p of pools) await p.destroy();
  await h?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Sleeps until the wall clock is `phase` ms into a slot (Date.now() modulo the interval). */
const untilPhase = (phase: number) => sleep((phase - (Date.now() % INTERVAL_MS) + INTERVAL_MS) % INTERVAL_MS);
const slotOf = (t: Date) => Math.floor(t.getTime() / INTERVAL_MS);

function scheduler() {
  const db = createDb(h.t.url, 4);
  pools.push(db);
  const job = startReconcileJob({ db, adapters: h.service.adapters, intervalMs: INTERVAL_MS, log: quiet });
  jobs.push(job);
  return job;
}

const storedRuns = () =>
  h.t.db
    .selectFrom('reconcile_runs')
    .select(['id', 'started_at'])
    .where('network', '=', chain.network)
    .where('mode', '=', chain.mode)
    .orderBy('id')
    .execute();

describe('scheduled reconcile: one run per slot across workers', () => {
  it('two schedulers started more than half an interval apart store one run per slot, and every slot runs', async () => {
    // A starts just after a slot boundary, B well past the middle of the same slot: before the slot claim, A's tick
    // and B's tick landed in one slot, more than half an interval apart, and each stored a run.
    await untilPhase(200);
    const first = Math.floor(Date.now() / INTERVAL_MS) + 1;
    scheduler();
    await untilPhase(2600);
    scheduler();
    // Two full slots after the first boundary both schedulers pass.
    await sleep((first + 2) * INTERVAL_MS + 1500 - Date.now());
    for (const j of jobs.splice(0)) await j.stop(); // waits for a run in progress: every run started is stored
    const runs = await storedRuns();
    const perSlot = new Map<number, number>();
    for (const r of runs) perSlot.set(slotOf(r.started_at), (perSlot.get(slotOf(r.started_at)) ?? 0) + 1);
    expect(
      [...perSlot.entries()].filter(([, n]) => n > 1),
      `runs per slot: ${[...perSlot.entries()].join(' ')}`,
    ).toEqual([]);
    // Single-flight, not no-flight: the slots both schedulers ticked in each have their run.
    expect(perSlot.get(first)).toBe(1);
    expect(perSlot.get(first + 1)).toBe(1);
  }, 60_000);

  it('a worker started just before a boundary skips it and takes part from the next one', async () => {
    await untilPhase(INTERVAL_MS - 500); // half a second before a boundary
    const skipped = Math.floor(Date.now() / INTERVAL_MS) + 1;
    const before = (await storedRuns()).length;
    scheduler();
    await sleep((skipped + 1) * INTERVAL_MS + 1500 - Date.now());
    for (const j of jobs.splice(0)) await j.stop();
    const runs = (await storedRuns()).slice(before);
    expect(runs.map((r) => slotOf(r.started_at))).toEqual([skipped + 1]);
  }, 60_000);

  it('a holder whose session died mid-run (its lock and its claim left behind) does not stop the next slot', async () => {
    await untilPhase(200); // a slot no scheduler claimed
    const before = (await storedRuns()).length;
    // A worker that claimed the current slot and took the chain's lock (as withReconcileLock does: a session-level
    // advisory lock), then crashed: its PostgreSQL session ends with the run unfinished.
    const slot = Math.floor(Date.now() / INTERVAL_MS);
    expect(await claimReconcileSlot(h.t.db, chain, BigInt(slot))).toBe(true);
    const holder = new pg.Client({ connectionString: h.t.url });
    holder.on('error', () => {});
    await holder.connect();
    const pid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    await holder.query('select pg_advisory_lock($1::int, hashtext($2))', [RECONCILE_LOCK_CLASS, chainKey(chain)]);
    const held = async () =>
      (
        await sql<{ n: number }>`select count(*)::int as n from pg_locks where locktype = 'advisory' and granted and pid = ${pid}`.execute(
          h.t.db,
        )
      ).rows[0]!.n;
    expect(await held()).toBe(1);
    // While it lives, a scheduled run of the chain (another slot) is turned away, nothing stored.
    const busy = await reconcile({ db: h.t.db, adapters: h.service.adapters }, { ...chain, scheduled: { slot: BigInt(slot) - 1000n } });
    expect(busy.chains[0]!.skipped).toBe('another run of this chain is in progress');
    await sql`select pg_terminate_backend(${pid})`.execute(h.t.db);
    await h.until(async () => ((await held()) === 0 ? true : undefined), 10_000);
    await holder.end().catch(() => {});

    scheduler();
    await sleep((slot + 1) * INTERVAL_MS + 2500 - Date.now());
    for (const j of jobs.splice(0)) await j.stop();
    const runs = await storedRuns();
    expect(runs.length).toBe(before + 1);
    expect(slotOf(runs.at(-1)!.started_at)).toBe(slot + 1);
  }, 60_000);
});
