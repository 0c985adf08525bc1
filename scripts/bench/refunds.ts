// Refund payout benchmark (issue 5): N refunds through the whole pipeline (API → BullMQ → build, sign, persist,
// broadcast → confirmations → completed) from ONE hot wallet on Anvil with automine. Prints payouts per second,
// p50/p99 from create to completed, and checks that the confirmed nonces have no gap. Never fails on a timing.
//   npx tsx scripts/bench/refunds.ts [--refunds 1000] [--concurrency 32] [--spread]
// Also prints, over the payout phase, the pg queries of this process (the service runs in it: API, watcher and the
// payout worker) and the database's commits per payout, and JSON-RPC calls per payout by method.
// BENCH_PROFILE=<dir> writes a CPU profile of this process over the payout phase there.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import pg from 'pg';
import { JsonRpcClient } from '../../chains/evm/rpc-client.js';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import setupTemplate from '../../test/support/global-setup.js';
import { fund } from '../../test/support/evm-tokens/scenario.js';
import { startServiceHarness } from '../../test/support/service-harness.js';
import { backgroundMiner } from '../../test/support/chain-watch.js';
import { signer } from '../../test/support/evm-tokens/scenario.js';
import { Redis } from 'ioredis';
import { createPayoutScheduler, startPayoutWorker } from '../../src/refunds/payout-worker.js';

const { values } = parseArgs({
  options: {
    refunds: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '64' },
    'poll-ms': { type: 'string', default: '250' },
    // Creates of one batch go to different sessions (refund i of session i mod sessions) instead of 50 partial refunds
    // of one session, which lock the same session row and run one after another.
    spread: { type: 'boolean', default: false },
  },
});
const N = Number(values.refunds);

// Round trips of this process, counted from the moment the payouts start. Also how long each transaction holds the
// two rows every payout of the wallet waits for: the wallet's nonce row (from the statement that locks it to the
// commit) and the merchant's receipt counter.
const counter = { queries: 0, rpc: new Map<string, number>() };
const held = new Map<pg.Client, { row: 'nonce' | 'receipt'; since: number }>();
const holds = { nonce: { n: 0, ms: 0 }, receipt: { n: 0, ms: 0 } };
const lockedRow = (text: string): 'nonce' | 'receipt' | null =>
  /hot_wallet_nonces/.test(text) && /for update|^\s*update/i.test(text) ? 'nonce' : /receipt_counters/.test(text) ? 'receipt' : null;
const pgQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
  counter.queries++;
  const text = typeof a[0] === 'string' ? a[0] : String((a[0] as { text?: string } | undefined)?.text ?? '');
  const r = (pgQuery as (...x: unknown[]) => unknown).apply(this, a);
  if (r instanceof Promise)
    r.then(
      () => {
        const now = performance.now();
        const row = lockedRow(text);
        if (row && !held.has(this)) held.set(this, { row, since: now });
        if (/^\s*(commit|rollback)\b/i.test(text)) {
          const h = held.get(this);
          if (h) {
            holds[h.row].n++;
            holds[h.row].ms += now - h.since;
            held.delete(this);
          }
        }
      },
      () => held.delete(this),
    );
  return r;
} as typeof pgQuery;
const rpcCall = JsonRpcClient.prototype.call;
JsonRpcClient.prototype.call = function <T>(this: JsonRpcClient, method: string, params: unknown[]): Promise<T> {
  counter.rpc.set(method, (counter.rpc.get(method) ?? 0) + 1);
  return rpcCall.call(this, method, params) as Promise<T>;
};
const PER_SESSION = 50; // partial refunds per paid session: 1 USDT each out of 50 USDT paid

const teardown = await setupTemplate();
const h = await startServiceHarness({
  extraEnv: {
    CHAIN_ETHEREUM_TEST_CONFIRMATIONS: '1',
    // No payout worker yet: all refunds are created first, then the pipeline is measured on its own.
    ROLES: 'api,watcher',
    LOG_LEVEL: 'silent',
  },
});
try {
  const m = await h.newMerchant('Bench refunds');
  await h.t.db
    .updateTable('merchants')
    .set({ daily_refund_count_limit: N + 10, daily_refund_amount_limit_minor: BigInt(N) * 1000n })
    .where('id', '=', m.id)
    .execute();
  await h.node.rpc('anvil_setBalance', [m.hotWallet, '0x3635c9adc5dea00000']); // 1000 ETH
  await fund(h.tokens.USDT, m.hotWallet, BigInt(N) * 1_000_000n);
  const sessions: string[] = [];
  for (let i = 0; i < Math.ceil(N / PER_SESSION); i++) sessions.push((await h.paidSession(m, { amount: `${PER_SESSION}.00` })).id);
  // Blocks keep coming even when no payout is being mined, as on a real chain.
  const miner = backgroundMiner(h.node, 500);

  const createdAt = new Map<string, number>();
  const createStarted = Date.now();
  const creates = [];
  for (let i = 0; i < N; i++) {
    const refundId = `bench-${i}`;
    creates.push(
      m.client
        .post('/api/v1/refunds/create', {
          session_id: sessions[values.spread ? i % sessions.length : Math.floor(i / PER_SESSION)],
          refund_id: refundId,
          amount: 100,
          currency: 'USDT',
        })
        .then((r) => {
          if (r.status !== 201) throw new Error(`create ${refundId}: ${r.text}`);
          createdAt.set(r.json.id, Date.now());
        }),
    );
    if (creates.length >= 50) await Promise.all(creates.splice(0));
  }
  await Promise.all(creates);
  const createSeconds = (Date.now() - createStarted) / 1000;

  const commits = async () =>
    BigInt(
      (await sql<{ n: string }>`select xact_commit::text as n from pg_stat_database where datname = current_database()`.execute(h.t.db))
        .rows[0]!.n,
    );
  const profiler = process.env.BENCH_PROFILE ? new Session() : null;
  if (profiler) {
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  }
  // Every 100 ms: how many of the database's sessions wait on a lock (a row lock every payout needs: the wallet's nonce
  // row, the merchant's receipt counter) and how many run a statement.
  const waits = { samples: 0, lock: 0, active: 0 };
  const sampler = setInterval(() => {
    sql<{ lock: string; active: string }>`select count(*) filter (where wait_event_type = 'Lock')::text as lock,
        count(*) filter (where state = 'active')::text as active
      from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`
      .execute(h.t.db)
      .then((r) => {
        waits.samples++;
        waits.lock += Number(r.rows[0]!.lock);
        waits.active += Number(r.rows[0]!.active);
      })
      .catch(() => {});
  }, 100);
  const commits0 = await commits();
  counter.queries = 0;
  counter.rpc.clear();
  holds.nonce = { n: 0, ms: 0 };
  holds.receipt = { n: 0, ms: 0 };
  const started = Date.now();
  for (const id of createdAt.keys()) createdAt.set(id, started); // latency counts from when the worker could start
  const redis = new Redis(h.env.REDIS_URL!);
  const scheduler = createPayoutScheduler({ connection: redis, prefix: h.env.REDIS_KEY_PREFIX! });
  const worker = await startPayoutWorker(
    { connection: redis, prefix: h.env.REDIS_KEY_PREFIX! },
    {
      db: h.t.db,
      adapters: h.service.adapters,
      signer,
      concurrency: Number(values.concurrency),
      pollMs: Number(values['poll-ms']),
      stuckAfterMs: 120_000,
      feeBumpPercent: 25,
      jobBudgetMs: 60_000,
      sweepIntervalMs: 60_000,
      lockDurationMs: 30_000,
    },
  );
  for (const id of createdAt.keys()) await scheduler.enqueue(id);

  const latencies: number[] = [];
  const seen = new Set<string>();
  while (seen.size < N) {
    const rows = await h.t.db
      .selectFrom('refunds')
      .select(['id', 'status', 'processed_at'])
      .where('merchant_id', '=', m.id)
      .where('status', 'in', ['completed', 'failed'])
      .execute();
    for (const r of rows) {
      if (seen.has(r.id)) continue;
      seen.add(r.id);
      if (r.status !== 'completed') throw new Error(`refund ${r.id} ${r.status}`);
      latencies.push(r.processed_at!.getTime() - createdAt.get(r.id)!);
    }
    if (Date.now() - started > 600_000) throw new Error(`only ${seen.size} of ${N} refunds settled in 10 minutes`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  const payoutQueries = counter.queries;
  const payoutRpc = [...counter.rpc].sort((a, b) => b[1] - a[1]);
  const payoutCommits = Number((await commits()) - commits0);
  if (profiler) {
    const { profile } = await profiler.post('Profiler.stop');
    mkdirSync(process.env.BENCH_PROFILE!, { recursive: true });
    const file = `${process.env.BENCH_PROFILE}/refunds-${Date.now()}.cpuprofile`;
    writeFileSync(file, JSON.stringify(profile));
    console.log(`CPU profile of the payout phase: ${file}`);
  }
  miner.stop();
  await worker.stop();
  await scheduler.close();
  redis.disconnect();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
  const nonces = await sql<{
    n: string;
  }>`select nonce::text as n from payout_attempts where sender = ${m.hotWallet.toLowerCase()} and state = 'confirmed' order by payout_attempts.nonce`.execute(
    h.t.db,
  );
  const ns = nonces.rows.map((r) => BigInt(r.n));
  const gaps = ns.filter((n, i) => i > 0 && n !== ns[i - 1]! + 1n).length;
  const replaced = await h.t.db
    .selectFrom('payout_attempts')
    .select((eb) => eb.fn.countAll<bigint>().as('n'))
    .where('state', '!=', 'confirmed')
    .executeTakeFirstOrThrow();

  console.log(`\nRefund payouts: ${N} refunds, one hot wallet, Anvil automine, 1 confirmation, PAYOUT_CONCURRENCY=${values.concurrency}`);
  console.log(
    `  creates (API, signed)        ${(N / createSeconds).toFixed(0)} per second (50 at a time, ${values.spread ? 'each of another session' : 'all of one session'})`,
  );
  console.log(`  payouts completed            ${(N / seconds).toFixed(1)} per second (target >= 50)`);
  console.log(`  queued → completed           p50 ${pct(50)} ms, p99 ${pct(99)} ms (all ${N} queued at once)`);
  console.log(`  confirmed nonces             ${ns.length}, from ${ns[0]} to ${ns[ns.length - 1]}, gaps: ${gaps}`);
  console.log(`  attempts not confirmed       ${replaced.n} (replacements or drops)`);
  const perPayout = (n: number) => (n / N).toFixed(2);
  console.log(
    `  round trips per payout       ${perPayout(payoutQueries)} pg queries, ${perPayout(payoutCommits)} commits (whole process: API, watcher, worker)`,
  );
  console.log(
    `  database sessions            ${(waits.lock / Math.max(1, waits.samples)).toFixed(1)} waiting on a lock, ${(waits.active / Math.max(1, waits.samples)).toFixed(1)} running a statement (mean of ${waits.samples} samples)`,
  );
  const hold = (h: { n: number; ms: number }) =>
    `${(h.ms / Math.max(1, h.n)).toFixed(1)} ms per transaction (${h.n}), locked ${((100 * h.ms) / (seconds * 1000)).toFixed(0)}% of the phase`;
  console.log(`  wallet nonce row held        ${hold(holds.nonce)}`);
  console.log(`  receipt counter row held     ${hold(holds.receipt)}`);
  console.log(
    `  JSON-RPC calls per payout    ${perPayout(payoutRpc.reduce((t, [, n]) => t + n, 0))}: ${payoutRpc.map(([m, n]) => `${m} ${perPayout(n)}`).join(', ')}`,
  );
  const perSecond = N / seconds;
  if (process.env.BENCH_OUT)
    writeFileSync(
      process.env.BENCH_OUT,
      JSON.stringify({
        figures: `${N} refunds from one hot wallet: ${perSecond.toFixed(1)} payouts completed/s; queued → completed p50 ${pct(50)} ms, p99 ${pct(99)} ms; ${ns.length} nonces confirmed, ${gaps} gaps, ${replaced.n} attempts not confirmed`,
        target: '≥ 50/s, 0 nonce gaps',
        met: perSecond >= 50 && gaps === 0 && ns.length === N,
        payouts_per_second: Number(perSecond.toFixed(1)),
        nonce_gaps: gaps,
      }),
    );
} finally {
  await h.close();
  await teardown();
}
