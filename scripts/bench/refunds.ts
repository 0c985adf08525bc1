// Refund payout benchmark (issue 5): N refunds through the whole pipeline (API → BullMQ → build, sign, persist,
// broadcast → confirmations → completed) from ONE hot wallet on Anvil with automine. Prints payouts per second,
// p50/p99 from create to completed, and checks that the confirmed nonces have no gap. Never fails on a timing.
//   npx tsx scripts/bench/refunds.ts [--refunds 1000] [--concurrency 32]
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import setupTemplate from '../../test/support/global-setup.js';
import { fund } from '../../test/support/evm-tokens/scenario.js';
import { startServiceHarness } from '../../test/support/service-harness.js';
import { backgroundMiner } from '../../test/support/chain-watch.js';
import { signer } from '../../test/support/evm-tokens/scenario.js';
import { Redis } from 'ioredis';
import { createPayoutScheduler, startPayoutWorker } from '../../src/payouts/worker.js';

const { values } = parseArgs({
  options: {
    refunds: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '64' },
    'poll-ms': { type: 'string', default: '250' },
  },
});
const N = Number(values.refunds);
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
          session_id: sessions[Math.floor(i / PER_SESSION)],
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
  console.log(`  creates (API, signed)        ${(N / createSeconds).toFixed(0)} per second`);
  console.log(`  payouts completed            ${(N / seconds).toFixed(1)} per second (target >= 50)`);
  console.log(`  queued → completed           p50 ${pct(50)} ms, p99 ${pct(99)} ms (all ${N} queued at once)`);
  console.log(`  confirmed nonces             ${ns.length}, from ${ns[0]} to ${ns[ns.length - 1]}, gaps: ${gaps}`);
  console.log(`  attempts not confirmed       ${replaced.n} (replacements or drops)`);
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
