// Refund payout benchmark (issue 5): N refunds through the whole pipeline (API → BullMQ → build, sign, persist,
// broadcast → confirmations → completed) from ONE hot wallet on Anvil with automine. Prints payouts per second,
// p50/p99 from create to completed, and checks that the confirmed nonces have no gap. Never fails on a timing.
//   npx tsx scripts/bench/refunds.ts [--refunds 1000] [--concurrency 64] [--spread] [--wallets 8] [--multi-refunds N]
//     [--signer process|role|in-process]
// Then (--wallets, default 8; 0 skips it) the same with --multi-refunds refunds (default --refunds) spread over that
// many merchants' hot wallets in parallel, one worker of the same concurrency: the one-wallet and the many-wallet
// rates in one run. The worker signs through the signer role in a process of its own over its socket, as deployed
// (--signer process, the default); --signer role runs that role inside this process (sharing its event loop with the
// API, the watcher and the worker, as before 2026-11-30), --signer in-process signs with the seed here.
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
import { keyMaterialFromEnv } from '../../src/signer/from-env.js';
import { RemoteSigner } from '../../src/signer/remote-signer.js';
import { createPayoutScheduler, startPayoutWorker } from '../../src/refunds/payout-worker.js';

const { values } = parseArgs({
  options: {
    refunds: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '64' },
    'poll-ms': { type: 'string', default: '250' },
    // Creates of one batch go to different sessions (refund i of session i mod sessions) instead of 50 partial refunds
    // of one session, which lock the same session row and run one after another.
    spread: { type: 'boolean', default: false },
    // Then the same pipeline over this many merchants' hot wallets in parallel (0: skip), --multi-refunds in all.
    wallets: { type: 'string', default: '8' },
    'multi-refunds': { type: 'string' },
    // process: the signer role in its own process (a socket round trip per signature, as deployed); role: that role in
    // this process; in-process: the seed.
    signer: { type: 'string', default: 'process' },
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
// The signer's answer time as the worker sees it (request written to answer read), inside the nonce section.
const signs = { n: 0, ms: 0 };
const remoteSign = RemoteSigner.prototype.signSecp256k1Digest;
RemoteSigner.prototype.signSecp256k1Digest = async function (this: RemoteSigner, ...a: Parameters<typeof remoteSign>) {
  const t = performance.now();
  try {
    return await remoteSign.apply(this, a);
  } finally {
    signs.n++;
    signs.ms += performance.now() - t;
  }
};
const PER_SESSION = 50; // partial refunds per paid session: 1 USDT each out of 50 USDT paid
const WALLETS = Number(values.wallets);
const MULTI = Number(values['multi-refunds'] ?? String(N));

const teardown = await setupTemplate();
const h = await startServiceHarness({
  extraEnv: {
    CHAIN_ETHEREUM_TEST_CONFIRMATIONS: '1',
    // No payout worker yet: all refunds are created first, then the pipeline is measured on its own.
    ROLES: 'api,watcher',
    LOG_LEVEL: 'silent',
    // The signer role's own limits would refuse a long run's payouts (they are not what is measured).
    SIGNER_REFUND_LIMIT_PER_HOUR: '1000000000',
    SIGNER_REFUND_LIMIT_PER_DAY: '1000000000',
  },
  signer: values.signer === 'in-process' ? 'in-process' : values.signer === 'role' ? 'role' : 'process',
});
// What the payout worker signs with: the harness's signer role over its socket (as deployed: a round trip per
// signature, justified from the ledger), or the seed in this process.
const material = keyMaterialFromEnv(h.env);
const workerSigner = values.signer === 'in-process' ? signer : material.kind === 'remote' ? material.signer : signer;

type Merchant = Awaited<ReturnType<typeof h.newMerchant>>;

async function fundedMerchant(name: string, refunds: number): Promise<{ m: Merchant; sessions: string[] }> {
  const m = await h.newMerchant(name);
  await h.t.db
    .updateTable('merchants')
    .set({ daily_refund_count_limit: refunds + 10, daily_refund_amount_limit_minor: BigInt(refunds) * 1000n })
    .where('id', '=', m.id)
    .execute();
  await h.node.rpc('anvil_setBalance', [m.hotWallet, '0x3635c9adc5dea00000']); // 1000 ETH
  await fund(h.tokens.USDT, m.hotWallet, BigInt(refunds) * 1_000_000n);
  const sessions: string[] = [];
  for (let i = 0; i < Math.ceil(refunds / PER_SESSION); i++) sessions.push((await h.paidSession(m, { amount: `${PER_SESSION}.00` })).id);
  return { m, sessions };
}

/** Creates `count` refunds of one merchant through the API, 50 at a time; answers their ids. */
async function createRefunds(x: { m: Merchant; sessions: string[] }, count: number, tag: string): Promise<string[]> {
  const ids: string[] = [];
  const creates = [];
  for (let i = 0; i < count; i++) {
    const refundId = `bench-${tag}-${i}`;
    creates.push(
      x.m.client
        .post('/api/v1/refunds/create', {
          session_id: x.sessions[values.spread ? i % x.sessions.length : Math.floor(i / PER_SESSION)],
          refund_id: refundId,
          amount: 100,
          currency: 'USDT',
        })
        .then((r) => {
          if (r.status !== 201) throw new Error(`create ${refundId}: ${r.text}`);
          ids.push(r.json.id);
        }),
    );
    if (creates.length >= 50) await Promise.all(creates.splice(0));
  }
  await Promise.all(creates);
  return ids;
}

const commits = async () =>
  BigInt(
    (await sql<{ n: string }>`select xact_commit::text as n from pg_stat_database where datname = current_database()`.execute(h.t.db))
      .rows[0]!.n,
  );

interface PhaseResult {
  count: number;
  wallets: number;
  seconds: number;
  p50: number;
  p99: number;
  confirmed: number;
  gaps: number;
  notConfirmed: bigint;
  queries: number;
  commits: number;
  rpc: Array<[string, number]>;
  waits: { samples: number; lock: number; active: number };
  holds: typeof holds & { sign: typeof signs };
  /** CPU time of this process (API, watcher, payout worker, the benchmark's polling) over the phase. */
  cpuMs: number;
}

/** Starts a payout worker, queues every refund of `merchants` at once and waits for all of them to complete. */
async function payoutPhase(merchants: Merchant[], ids: string[], profileName: string | null): Promise<PhaseResult> {
  const profiler = profileName && process.env.BENCH_PROFILE ? new Session() : null;
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
  signs.n = 0;
  signs.ms = 0;
  const started = Date.now();
  const cpu0 = process.cpuUsage();
  const redis = new Redis(h.env.REDIS_URL!);
  const scheduler = createPayoutScheduler({ connection: redis, prefix: h.env.REDIS_KEY_PREFIX! });
  const worker = await startPayoutWorker(
    { connection: redis, prefix: h.env.REDIS_KEY_PREFIX! },
    {
      db: h.t.db,
      adapters: h.service.adapters,
      signer: workerSigner,
      concurrency: Number(values.concurrency),
      pollMs: Number(values['poll-ms']),
      stuckAfterMs: 120_000,
      feeBumpPercent: 25,
      jobBudgetMs: 60_000,
      sweepIntervalMs: 60_000,
      lockDurationMs: 30_000,
    },
  );
  for (const id of ids) await scheduler.enqueue(id);

  const latencies: number[] = [];
  const seen = new Set<string>();
  const merchantIds = merchants.map((m) => m.id);
  while (seen.size < ids.length) {
    const rows = await h.t.db
      .selectFrom('refunds')
      .select(['id', 'status', 'processed_at'])
      .where('merchant_id', 'in', merchantIds)
      .where('status', 'in', ['completed', 'failed'])
      .execute();
    for (const r of rows) {
      if (seen.has(r.id)) continue;
      seen.add(r.id);
      if (r.status !== 'completed') throw new Error(`refund ${r.id} ${r.status}`);
      latencies.push(r.processed_at!.getTime() - started); // from when the worker could start
    }
    if (Date.now() - started > 600_000) throw new Error(`only ${seen.size} of ${ids.length} refunds settled in 10 minutes`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const seconds = (Date.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(sampler);
  const queries = counter.queries;
  const rpc = [...counter.rpc].sort((a, b) => b[1] - a[1]);
  const payoutCommits = Number((await commits()) - commits0);
  const phaseHolds = { nonce: { ...holds.nonce }, receipt: { ...holds.receipt }, sign: { ...signs } };
  if (profiler) {
    const { profile } = await profiler.post('Profiler.stop');
    mkdirSync(process.env.BENCH_PROFILE!, { recursive: true });
    const file = `${process.env.BENCH_PROFILE}/refunds-${profileName}-${Date.now()}.cpuprofile`;
    writeFileSync(file, JSON.stringify(profile));
    console.log(`CPU profile of the payout phase: ${file}`);
  }
  await worker.stop();
  await scheduler.close();
  redis.disconnect();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
  // Per wallet: the confirmed nonces, each wallet's counted for gaps.
  let confirmed = 0;
  let gaps = 0;
  for (const m of merchants) {
    const nonces = await sql<{
      n: string;
    }>`select nonce::text as n from payout_attempts where sender = ${m.hotWallet.toLowerCase()} and state = 'confirmed' order by payout_attempts.nonce`.execute(
      h.t.db,
    );
    const ns = nonces.rows.map((r) => BigInt(r.n));
    confirmed += ns.length;
    gaps += ns.filter((n, i) => (i === 0 ? n !== 0n : n !== ns[i - 1]! + 1n)).length;
  }
  const notConfirmed = (
    await h.t.db
      .selectFrom('payout_attempts')
      .innerJoin('refunds', 'refunds.id', 'payout_attempts.refund_id')
      .select((eb) => eb.fn.countAll<bigint>().as('n'))
      .where('refunds.merchant_id', 'in', merchantIds)
      .where('payout_attempts.state', '!=', 'confirmed')
      .executeTakeFirstOrThrow()
  ).n;
  return {
    count: ids.length,
    wallets: merchants.length,
    seconds,
    p50: pct(50),
    p99: pct(99),
    confirmed,
    gaps,
    notConfirmed,
    queries,
    commits: payoutCommits,
    rpc,
    waits,
    holds: phaseHolds,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
}

function print(title: string, r: PhaseResult): void {
  const perPayout = (n: number) => (n / r.count).toFixed(2);
  console.log(`\n${title}`);
  console.log(`  payouts completed            ${(r.count / r.seconds).toFixed(1)} per second`);
  console.log(`  queued → completed           p50 ${r.p50} ms, p99 ${r.p99} ms (all ${r.count} queued at once)`);
  console.log(`  confirmed nonces             ${r.confirmed} over ${r.wallets} wallet(s), gaps: ${r.gaps}`);
  console.log(`  attempts not confirmed       ${r.notConfirmed} (replacements or drops)`);
  console.log(
    `  round trips per payout       ${perPayout(r.queries)} pg queries, ${perPayout(r.commits)} commits (this process: API, watcher, worker, and the signer with --signer role)`,
  );
  console.log(
    `  database sessions            ${(r.waits.lock / Math.max(1, r.waits.samples)).toFixed(1)} waiting on a lock, ${(r.waits.active / Math.max(1, r.waits.samples)).toFixed(1)} running a statement (mean of ${r.waits.samples} samples)`,
  );
  const hold = (x: { n: number; ms: number }) =>
    `${(x.ms / Math.max(1, x.n)).toFixed(1)} ms per transaction (${x.n}), locked ${((100 * x.ms) / (r.seconds * 1000 * r.wallets)).toFixed(0)}% of the phase${r.wallets > 1 ? ' per wallet' : ''}`;
  console.log(
    `  CPU of this process          ${(r.cpuMs / r.count).toFixed(1)} ms per payout, ${((100 * r.cpuMs) / (r.seconds * 1000)).toFixed(0)}% of one core over the phase (bound if near 100%: ${(1000 / (r.cpuMs / r.count)).toFixed(0)}/s)`,
  );
  console.log(`  wallet nonce row held        ${hold(r.holds.nonce)}`);
  console.log(`  receipt counter row held     ${hold(r.holds.receipt)}`);
  if (r.holds.sign.n > 0)
    console.log(
      `  signer's answer              ${(r.holds.sign.ms / r.holds.sign.n).toFixed(1)} ms per signature (${r.holds.sign.n}), inside the nonce section`,
    );
  console.log(
    `  JSON-RPC calls per payout    ${perPayout(r.rpc.reduce((t, [, n]) => t + n, 0))}: ${r.rpc.map(([m, n]) => `${m} ${perPayout(n)}`).join(', ')}`,
  );
}

try {
  const one = await fundedMerchant('Bench refunds', N);
  const many: Array<{ m: Merchant; sessions: string[] }> = [];
  for (let w = 0; w < WALLETS; w++) many.push(await fundedMerchant(`Bench refunds ${w}`, Math.ceil(MULTI / WALLETS)));
  // Blocks keep coming even when no payout is being mined, as on a real chain.
  const miner = backgroundMiner(h.node, 500);

  const createStarted = Date.now();
  const oneIds = await createRefunds(one, N, 'one');
  const createSeconds = (Date.now() - createStarted) / 1000;
  const single = await payoutPhase([one.m], oneIds, 'one');
  // Created only now: the API queues a payout job for every refund it creates, and the first phase's worker would
  // take them up.
  const manyIds = (
    await Promise.all(many.map((x, w) => createRefunds(x, Math.floor(MULTI / WALLETS) + (w < MULTI % WALLETS ? 1 : 0), `w${w}`)))
  ).flat();
  const multi =
    WALLETS > 0
      ? await payoutPhase(
          many.map((x) => x.m),
          manyIds,
          'multi',
        )
      : null;
  miner.stop();

  const signerName =
    values.signer === 'in-process'
      ? 'the seed in this process'
      : values.signer === 'role'
        ? 'the signer role in this process (socket)'
        : 'the signer role in its own process (socket)';
  console.log(`\nRefund payouts: Anvil automine, 1 confirmation, PAYOUT_CONCURRENCY=${values.concurrency}, signed by ${signerName}`);
  console.log(
    `  creates (API, signed)        ${(N / createSeconds).toFixed(0)} per second (50 at a time, ${values.spread ? 'each of another session' : 'all of one session'})`,
  );
  print(`One hot wallet: ${N} refunds (target >= 50/s, 0 gaps)`, single);
  if (multi) print(`${WALLETS} merchants' hot wallets in parallel: ${multi.count} refunds (target >= 4x the one-wallet rate)`, multi);
  const perSecond = N / single.seconds;
  const multiPerSecond = multi ? multi.count / multi.seconds : null;
  if (multiPerSecond !== null) console.log(`\n  ${WALLETS} wallets / one wallet      ${(multiPerSecond / perSecond).toFixed(2)}x`);
  if (process.env.BENCH_OUT)
    writeFileSync(
      process.env.BENCH_OUT,
      JSON.stringify({
        figures: `${N} refunds from one hot wallet: ${perSecond.toFixed(1)} payouts completed/s; queued → completed p50 ${single.p50} ms, p99 ${single.p99} ms; ${single.confirmed} nonces confirmed, ${single.gaps} gaps, ${single.notConfirmed} attempts not confirmed${multiPerSecond !== null ? `; ${WALLETS} wallets: ${multiPerSecond.toFixed(1)}/s (${(multiPerSecond / perSecond).toFixed(2)}x)` : ''}`,
        target: '≥ 50/s, 0 nonce gaps; ≥ 4x across 8 wallets',
        met:
          perSecond >= 50 &&
          single.gaps === 0 &&
          single.confirmed === N &&
          (multiPerSecond === null || (multiPerSecond >= 4 * perSecond && multi!.gaps === 0)),
        payouts_per_second: Number(perSecond.toFixed(1)),
        nonce_gaps: single.gaps,
        ...(multiPerSecond !== null
          ? { multi_wallet_payouts_per_second: Number(multiPerSecond.toFixed(1)), multi_wallet_gaps: multi!.gaps }
          : {}),
      }),
    );
} finally {
  await h.close();
  await teardown();
}
