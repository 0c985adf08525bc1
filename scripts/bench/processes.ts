import { execSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { insertOutboxEvents, type OutboxEventInput } from '../../src/ledger/core/outbox.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { createPayoutScheduler } from '../../src/refunds/payout-worker.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { TEST_MASTER_KEY } from '../../test/support/api-harness.js';
import { backgroundMiner } from '../../test/support/chain-watch.js';
import { fund } from '../../test/support/evm-tokens/scenario.js';
import setupTemplate from '../../test/support/global-setup.js';
import { startServiceHarness } from '../../test/support/service-harness.js';
import { spawnRole, type RoleProcess as SpawnedRole } from '../../test/support/spawn-role.js';
import { countDeliveries, countPayouts, machineTicks, procStatTicks, ratioCeiling } from './processes-count.js';
import { benchPaymentEvent } from './bench-events.js';
import { startCountingReceiver } from './counting-receiver.js';
import { signedRequest } from './signed-request.js';

// More processes, more machines (issue 38): what a second API process and a second worker process add, on this
// machine, in one run, with the machine's PostgreSQL and Redis shared by every process.
//   npm run bench:processes [-- --seconds 10 --connections 32 --events 4000 --refunds 100 --merchants 4]
// 1. API: two processes running the service's API role (src/main.ts's start() with ROLES=api, one OS process each,
//    test/support/role-process.ts) on one database and Redis prefix. Signed create-session and get-session, for
//    --seconds each, against the first process alone and against both (autocannon spreads its --connections over the
//    two URLs), in 1, 2, 2, 1 order to cancel drift. req/s, p50, p99.
// 2. Workers: 1 or 2 processes running the worker role (ROLES=worker: outbox relay, webhook delivery, refund payouts
//    and the rest of the role), started for each measurement, again 1, 2, 2, 1. Webhooks: a burst of --events outbox
//    events (10 merchants) delivered to a receiver in this process, deliveries/s. Refund payouts: --refunds refunds per
//    merchant for --merchants merchants, each paying from its own hot wallet on Anvil (automine, 1 confirmation),
//    created beforehand through the API and queued at once, payouts completed/s.
// 3. Counts, over the whole run: receiver hits per event id (exactly once, duplicated, missing) and, on chain, token
//    Transfer logs per refund (each paid once), nonces per hot wallet (no gap, no repeat, as many as on chain).
// 4. What bounds each ratio: CPU time of every process of the run over each measurement (/proc/<pid>/stat: the service
//    processes, this process — the load generator, the receiver, the harness's own API and watcher —, the run's
//    database's Postgres backends, redis-server, Anvil), and the machine's busy time (/proc/stat) out of 100 % per
//    core; load average at start and end. Prints figures; never fails on a timing.

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    events: { type: 'string', default: '3000' },
    refunds: { type: 'string', default: '30' },
    merchants: { type: 'string', default: '4' },
    'payout-concurrency': { type: 'string', default: '64' },
    skip: { type: 'string', default: '' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const EVENTS = Number(values.events);
const PER_MERCHANT = Number(values.refunds);
const MERCHANTS = Number(values.merchants);
const PAYOUT_CONCURRENCY = values['payout-concurrency'];
const skip = new Set(values.skip.split(',').filter(Boolean));
const ORDER = [1, 2, 2, 1] as const;
const CORES = cpus().length;
const TICK = Number(execSync('getconf CLK_TCK').toString().trim()) || 100;
const loadStart = loadavg();
const startedAt = new Date();

// ---- CPU accounting -------------------------------------------------------------------------------------------------

const ticksOf = (pid: number): number | undefined => {
  try {
    return procStatTicks(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
};
const findPids = (match: (comm: string, cmdline: string) => boolean): number[] =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const comm = readFileSync(`/proc/${d}/comm`, 'utf8').trim();
        const cmdline = readFileSync(`/proc/${d}/cmdline`, 'utf8').replaceAll('\0', ' ');
        return match(comm, cmdline);
      } catch {
        return false;
      }
    })
    .map(Number);

interface Snapshot {
  at: number;
  machine: { busy: number; total: number };
  procs: Map<string, number>;
  pg: Map<number, number>;
}
type Tracked = { label: string; pid: number };
let tracked: Tracked[] = [];
let pgBackends: () => Promise<number[]> = async () => [];

async function snapshot(): Promise<Snapshot> {
  const pg = new Map<number, number>();
  for (const pid of await pgBackends()) {
    const t = ticksOf(pid);
    if (t !== undefined) pg.set(pid, t);
  }
  const procs = new Map<string, number>();
  for (const p of tracked) procs.set(p.label, ticksOf(p.pid) ?? 0);
  return { at: performance.now(), machine: machineTicks(readFileSync('/proc/stat', 'utf8')), procs, pg };
}

interface CpuShare {
  /** CPU % (100 = one core) per tracked process. */
  procs: Array<[string, number]>;
  postgres: number;
  machine: number;
  other: number;
}
function cpuBetween(a: Snapshot, b: Snapshot): CpuShare {
  const s = (b.at - a.at) / 1000;
  const pct = (ticks: number) => (ticks / TICK / s) * 100;
  const procs: Array<[string, number]> = [...b.procs].map(([label, t]) => [label, pct(t - (a.procs.get(label) ?? t))]);
  let pgTicks = 0;
  for (const [pid, t] of b.pg) pgTicks += t - (a.pg.get(pid) ?? 0);
  const postgres = pct(pgTicks);
  const machine = ((b.machine.busy - a.machine.busy) / Math.max(1, b.machine.total - a.machine.total)) * CORES * 100;
  const known = procs.reduce((t, [, v]) => t + v, 0) + postgres;
  return { procs, postgres, machine, other: Math.max(0, machine - known) };
}
async function measured<T>(f: () => Promise<T>): Promise<{ r: T; cpu: CpuShare }> {
  // Requests of the previous run still being handled (autocannon stops without waiting for their answers) end first.
  await new Promise((r) => setTimeout(r, 1000));
  const a = await snapshot();
  const r = await f();
  const b = await snapshot();
  return { r, cpu: cpuBetween(a, b) };
}
const fmtCpu = (c: CpuShare) =>
  `${c.procs
    .filter(([, v]) => v >= 0.5)
    .map(([l, v]) => `${l} ${v.toFixed(0)}`)
    .join(', ')}, postgres ${c.postgres.toFixed(0)}; machine ${c.machine.toFixed(0)} of ${CORES * 100} (other work ${c.other.toFixed(0)})`;

// ---- Service processes -----------------------------------------------------------------------------------------------

interface RoleProcess extends SpawnedRole {
  warnings: string[];
}
async function startRole(env: Record<string, string>, name: string): Promise<RoleProcess> {
  const warnings: string[] = [];
  const spawned = await spawnRole(env, name, (line) => {
    if (warnings.length < 200) warnings.push(`${name}: ${line.slice(0, 300)}`);
  });
  return { ...spawned, warnings };
}

// ---- The shared deployment: database, Anvil with USDT and USDC, Redis ------------------------------------------------

console.log(`More processes (issue 38): ${CORES} cores, load average ${loadStart.map((x) => x.toFixed(2)).join(' ')}`);
const teardown = await setupTemplate();
// The harness (in this process) owns the database and Anvil, and its own API and watcher create and pay the sessions
// the refunds need. Its queues are under its own Redis prefix: the service processes measured here share another one,
// so nothing the harness queues (payouts of refunds it creates) reaches them before a measurement queues it.
const h = await startServiceHarness({ signer: 'in-process', extraEnv: { CHAIN_ETHEREUM_TEST_CONFIRMATIONS: '1', ROLES: 'api,watcher' } });
const prefix = `sp_bench_procs_${randomBytes(4).toString('hex')}`;
const roleEnv = (roles: string): Record<string, string> => ({
  ...h.env,
  ROLES: roles,
  REDIS_KEY_PREFIX: prefix,
  PORT: '0',
  LOG_LEVEL: 'warn',
  // One metrics listener per process would need a port each; the API's HTTP metrics cost is measured by bench:api.
  METRICS_PORT: 'off',
  MIGRATE_ON_START: 'false',
  // Payouts: as scripts/bench/refunds.ts runs them; the sweep only re-adds refunds older than an hour (none here).
  PAYOUT_CONCURRENCY,
  PAYOUT_POLL_MS: '250',
  PAYOUT_SWEEP_INTERVAL_MS: '3600000',
  PAYOUT_JOB_BUDGET_MS: '60000',
  // Webhooks: as scripts/bench/webhooks.ts runs them (10 merchants, 20 each in flight across all processes).
  WEBHOOK_CONCURRENCY: '100',
  WEBHOOK_PER_MERCHANT_CONCURRENCY: '20',
  WEBHOOK_RELAY_POLL_MS: '100',
  WEBHOOK_RETRY_SCHEDULE_MS: '1000,2000,4000,8000,16000',
});
pgBackends = async () =>
  (await sql<{ pid: number }>`select pid from pg_stat_activity where datname = ${h.t.name}`.execute(h.t.db)).rows.map((r) => r.pid);
const redisPid = findPids((comm) => comm === 'redis-server')[0];
const anvilPid = findPids((comm, cmd) => comm === 'anvil' && cmd.includes(`--port ${h.node.port} `))[0];
const box = new SecretBox(TEST_MASTER_KEY);
const warnings: string[] = [];

// ---- 1. API: 1 vs 2 processes ----------------------------------------------------------------------------------------

interface ApiRow {
  endpoint: string;
  procs: number;
  rps: number;
  p50: number;
  p99: number;
  bad: number;
  cpu: CpuShare;
}
const apiRows: ApiRow[] = [];
if (!skip.has('api')) {
  const apis = [await startRole(roleEnv('api'), 'api-1'), await startRole(roleEnv('api'), 'api-2')];
  const urls = apis.map((a) => `http://127.0.0.1:${a.port}`);
  const m = await createMerchant(h.t.db, box, { name: 'bench api' });
  const { key, secret } = m.testKey;
  let seq = 0;
  const signed = (method: 'GET' | 'POST', path: string, body: string) => signedRequest({ key, secret }, method, path, body);
  const createRequest = () =>
    signed(
      'POST',
      '/api/v1/checkout/sessions/create',
      JSON.stringify({ amount: '19.99', currency: 'USD', order_id: `procs-${process.pid}-${seq++}` }),
    );
  const created = await fetch(`${urls[0]}/api/v1/checkout/sessions/create`, createRequest() as RequestInit);
  const sessionId = ((await created.json()) as { id: string }).id;
  const getRequest = () => signed('GET', `/api/v1/checkout/sessions/${sessionId}`, '');
  const cannon = async (targets: string[], make: () => object, duration: number) => {
    const r = await autocannon({
      // autocannon takes several URLs and deals its connections over them in turn (its types say one).
      url: targets as unknown as string,
      connections,
      duration,
      requests: [{ setupRequest: (req: object) => ({ ...req, ...make() }) }],
    });
    return { rps: r.requests.total / duration, p50: r.latency.p50, p99: r.latency.p99, bad: r.non2xx + r.errors + r.timeouts };
  };
  tracked = [
    { label: 'bench', pid: process.pid },
    { label: 'api-1', pid: apis[0]!.pid },
    { label: 'api-2', pid: apis[1]!.pid },
    ...(redisPid ? [{ label: 'redis', pid: redisPid }] : []),
  ];
  // Warm both processes up (JIT, pools, prepared plans) before anything is timed.
  await cannon(urls, createRequest, 2);
  await cannon(urls, getRequest, 2);
  for (const [endpoint, make] of [
    ['create-session', createRequest],
    ['get-session', getRequest],
  ] as const) {
    for (const n of ORDER) {
      const { r, cpu } = await measured(() => cannon(urls.slice(0, n), make, seconds));
      apiRows.push({ endpoint, procs: n, ...r, cpu });
      console.log(
        `  ${endpoint} ${n} API process${n > 1 ? 'es' : ''}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, non-2xx ${r.bad}; load ${loadavg()[0]!.toFixed(1)}; CPU % ${fmtCpu(cpu)}`,
      );
    }
  }
  await new Promise((r) => setTimeout(r, 1000)); // the last run's requests in flight end before the processes stop
  for (const a of apis) {
    await a.stop();
    warnings.push(...a.warnings);
  }
}

// ---- 2. Workers: 1 vs 2 processes ------------------------------------------------------------------------------------

interface WorkerRow {
  what: 'webhooks' | 'payouts';
  procs: number;
  n: number;
  seconds: number;
  perSecond: number;
  cpu: CpuShare;
}
const workerRows: WorkerRow[] = [];
const hits = new Map<string, number>();
let unique = 0;
// The merchants' endpoint: counts hits per event id (scripts/bench/counting-receiver.ts).
const receiver = await startCountingReceiver((id) => {
  const n = (hits.get(id) ?? 0) + 1;
  hits.set(id, n);
  if (n === 1) unique++;
});
const hookUrl = receiver.url;
const hookMerchants: string[] = [];
const refundMerchants: Array<{ id: string; hotWallet: string }> = [];
const batches: string[][] = [];
let payoutCount: ReturnType<typeof countPayouts> | undefined;
let deliveryCount: ReturnType<typeof countDeliveries> | undefined;
let attemptsPerEvent: { events: number; attempts: number; retried: number } | undefined;
if (!skip.has('workers')) {
  for (let i = 0; i < 10; i++)
    hookMerchants.push((await createMerchant(h.t.db, box, { name: `hooks-${i}`, webhookUrl: hookUrl })).merchantId);
  // Refunds: MERCHANTS merchants, each with a paid session big enough for all its refunds (1.00 USDT each) and its
  // own funded hot wallet; every measurement's refunds created now, through the harness's API (queued under the
  // harness's prefix, which no worker process reads).
  const perMerchantTotal = PER_MERCHANT * ORDER.length;
  const merchants = await Promise.all(
    Array.from({ length: MERCHANTS }, async (_, i) => {
      const m = await h.newMerchant(`refunds-${i}`);
      await h.t.db
        .updateTable('merchants')
        .set({ daily_refund_count_limit: perMerchantTotal + 10, daily_refund_amount_limit_minor: BigInt(perMerchantTotal) * 1000n })
        .where('id', '=', m.id)
        .execute();
      return m;
    }),
  );
  const sessions: string[] = [];
  for (const m of merchants) {
    refundMerchants.push({ id: m.id, hotWallet: m.hotWallet.toLowerCase() });
    await h.node.rpc('anvil_setBalance', [m.hotWallet, '0x3635c9adc5dea00000']); // 1000 ETH
    await fund(h.tokens.USDT, m.hotWallet, BigInt(perMerchantTotal) * 1_000_000n);
    sessions.push((await h.paidSession(m, { amount: `${perMerchantTotal}.00` })).id);
  }
  const createStarted = Date.now();
  for (let b = 0; b < ORDER.length; b++) {
    const ids: string[] = [];
    await Promise.all(
      merchants.map(async (m, i) => {
        for (let k = 0; k < PER_MERCHANT; k += 25) {
          const made = await Promise.all(
            Array.from({ length: Math.min(25, PER_MERCHANT - k) }, async (_, j) => {
              const r = await m.client.post('/api/v1/refunds/create', {
                session_id: sessions[i],
                refund_id: `procs-${b}-${k + j}`,
                amount: 100,
                currency: 'USDT',
              });
              if (r.status !== 201) throw new Error(`refund create: ${r.status} ${r.text}`);
              return r.json.id as string;
            }),
          );
          ids.push(...made);
        }
      }),
    );
    batches.push(ids);
  }
  console.log(`  ${batches.flat().length} refunds created in ${((Date.now() - createStarted) / 1000).toFixed(1)} s (setup, not measured)`);

  const redis = new Redis(h.env.REDIS_URL!);
  const payouts = createPayoutScheduler({ connection: redis, prefix });
  const miner = backgroundMiner(h.node, 500); // blocks keep coming, as on a real chain
  const unrelayed = async () =>
    (await sql<{ n: number }>`select count(*)::int as n from outbox_events where relayed_at is null`.execute(h.t.db)).rows[0]!.n;
  let k = 0;
  for (const [b, n] of ORDER.entries()) {
    const workers: RoleProcess[] = [];
    for (let i = 0; i < n; i++) workers.push(await startRole(roleEnv('worker'), `worker-${i + 1}`));
    tracked = [
      { label: 'bench', pid: process.pid },
      ...workers.map((w, i) => ({ label: `worker-${i + 1}`, pid: w.pid })),
      ...(redisPid ? [{ label: 'redis', pid: redisPid }] : []),
      ...(anvilPid ? [{ label: 'anvil', pid: anvilPid }] : []),
    ];
    // What the setup left in the outbox (refund events of merchants without a URL: recorded as skipped) first.
    for (const until = Date.now() + 60_000; (await unrelayed()) > 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 100));
    // Webhooks: EVENTS events written as the ledger writes a block's events (one statement per 500), all delivered.
    const wh = await measured(async () => {
      const target = unique + EVENTS;
      const t0 = performance.now();
      for (let done = 0; done < EVENTS; done += 500) {
        const events: OutboxEventInput[] = [];
        for (let i = 0; i < Math.min(500, EVENTS - done); i++, k++)
          events.push(benchPaymentEvent(hookMerchants[k % hookMerchants.length]!, k));
        await h.t.db.transaction().execute((trx) => insertOutboxEvents(trx, events));
      }
      for (const until = Date.now() + 120_000; unique < target && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
      return (performance.now() - t0) / 1000;
    });
    workerRows.push({ what: 'webhooks', procs: n, n: EVENTS, seconds: wh.r, perSecond: EVENTS / wh.r, cpu: wh.cpu });
    console.log(
      `  webhooks ${n} worker process${n > 1 ? 'es' : ''}: ${(EVENTS / wh.r).toFixed(0)} deliveries/s (${EVENTS} in ${wh.r.toFixed(1)} s); load ${loadavg()[0]!.toFixed(1)}; CPU % ${fmtCpu(wh.cpu)}`,
    );
    // Payouts: this measurement's refunds queued at once; timed until every one is completed (or failed).
    const ids = batches[b]!;
    const po = await measured(async () => {
      const t0 = performance.now();
      for (const id of ids) await payouts.enqueue(id);
      for (const until = Date.now() + 300_000; Date.now() < until; ) {
        const { n: settled } = await h.t.db
          .selectFrom('refunds')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('id', 'in', ids)
          .where('status', 'in', ['completed', 'failed'])
          .executeTakeFirstOrThrow();
        if (Number(settled) >= ids.length) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      return (performance.now() - t0) / 1000;
    });
    workerRows.push({ what: 'payouts', procs: n, n: ids.length, seconds: po.r, perSecond: ids.length / po.r, cpu: po.cpu });
    console.log(
      `  payouts ${n} worker process${n > 1 ? 'es' : ''}: ${(ids.length / po.r).toFixed(1)} payouts/s (${ids.length} from ${MERCHANTS} hot wallets in ${po.r.toFixed(1)} s); load ${loadavg()[0]!.toFixed(1)}; CPU % ${fmtCpu(po.cpu)}`,
    );
    // A delivery's attempt row commits after the receiver's 200: let the last ones record before the processes stop.
    await new Promise((r) => setTimeout(r, 500));
    for (const w of workers) {
      await w.stop();
      warnings.push(...w.warnings);
    }
  }
  miner.stop();
  await payouts.close();
  redis.disconnect();

  // ---- 3. Counts ---------------------------------------------------------------------------------------------------
  const written = await h.t.db.selectFrom('outbox_events').select('id').where('merchant_id', 'in', hookMerchants).execute();
  deliveryCount = countDeliveries(
    written.map((r) => r.id),
    hits,
  );
  const att = await sql<{ events: number; attempts: number; retried: number }>`
    select count(distinct event_id)::int as events, count(*)::int as attempts,
           (count(*) - count(distinct event_id))::int as retried
    from webhook_delivery_attempts where merchant_id = any(${hookMerchants})`.execute(h.t.db);
  attemptsPerEvent = att.rows[0]!;
  const allIds = batches.flat();
  const refunds = await h.t.db.selectFrom('refunds').select(['id', 'status']).where('id', 'in', allIds).execute();
  const attempts = await h.t.db
    .selectFrom('payout_attempts')
    .select(['refund_id', 'tx_hash', 'sender', 'nonce', 'state'])
    .where('refund_id', 'in', allIds)
    .execute();
  const TRANSFER = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
  const transfers: Array<{ txHash: string; from: string }> = [];
  const chainNonces = new Map<string, bigint>();
  for (const w of refundMerchants) {
    const logs = await h.node.rpc<Array<{ transactionHash: string }>>('eth_getLogs', [
      {
        address: h.tokens.USDT.address,
        fromBlock: '0x0',
        toBlock: 'latest',
        topics: [TRANSFER, `0x${w.hotWallet.slice(2).padStart(64, '0')}`],
      },
    ]);
    for (const l of logs) transfers.push({ txHash: l.transactionHash, from: w.hotWallet });
    chainNonces.set(w.hotWallet, BigInt(await h.node.rpc<string>('eth_getTransactionCount', [w.hotWallet, 'latest'])));
  }
  payoutCount = countPayouts({
    refunds,
    attempts: attempts.map((a) => ({
      refundId: a.refund_id,
      txHash: a.tx_hash,
      sender: a.sender,
      nonce: a.nonce === null ? null : BigInt(a.nonce),
      state: a.state,
    })),
    transfers,
    chainNonces,
  });
}

// ---- Report ----------------------------------------------------------------------------------------------------------

const loadEnd = loadavg();
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const pick = <T extends { procs: number }>(rows: T[], n: number) => rows.filter((r) => r.procs === n);
const sumCpu = (rows: Array<{ cpu: CpuShare }>, which: (l: string) => boolean) =>
  mean(rows.map((r) => r.cpu.procs.filter(([l]) => which(l)).reduce((t, [, v]) => t + v, 0)));
const lines: string[] = [];
const out = (s = '') => {
  lines.push(s);
  console.log(s);
};
out();
out(
  `More processes (issue 38), ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${CORES} cores; load average at start ${loadStart.map((x) => x.toFixed(2)).join(' ')}, at end ${loadEnd.map((x) => x.toFixed(2)).join(' ')}`,
);
out(`order 1, 2, 2, 1 processes; figures are the mean of the two runs of each; CPU in % of one core (the machine has ${CORES * 100} %)`);
out();
out(
  '| measurement | 1 process | 2 processes | ratio 2/1 | service CPU 1 → 2 | postgres | redis | anvil | load generator (this process) | machine busy 1 → 2 | other work 1 → 2 |',
);
out('|---|---|---|---|---|---|---|---|---|---|---|');
const ratios: Record<string, number> = {};
const row = (
  name: string,
  rows: Array<{ procs: number; cpu: CpuShare }>,
  fig: (rs: typeof rows) => string,
  value: (rs: typeof rows) => number,
  service: (l: string) => boolean,
) => {
  const one = pick(rows, 1);
  const two = pick(rows, 2);
  const ratio = value(two) / value(one);
  ratios[name] = ratio;
  const c = (rs: typeof rows, f: (x: CpuShare) => number) => mean(rs.map((r) => f(r.cpu))).toFixed(0);
  const proc = (l: string) => (rs: typeof rows) => mean(rs.map((r) => r.cpu.procs.find(([x]) => x === l)?.[1] ?? 0)).toFixed(0);
  out(
    `| ${name} | ${fig(one)} | ${fig(two)} | **${ratio.toFixed(2)}** | ${sumCpu(one, service).toFixed(0)} → ${sumCpu(two, service).toFixed(0)} | ${c(one, (x) => x.postgres)} → ${c(two, (x) => x.postgres)} | ${proc('redis')(one)} → ${proc('redis')(two)} | ${proc('anvil')(one)} → ${proc('anvil')(two)} | ${proc('bench')(one)} → ${proc('bench')(two)} | ${c(one, (x) => x.machine)} → ${c(two, (x) => x.machine)} | ${c(one, (x) => x.other)} → ${c(two, (x) => x.other)} |`,
  );
};
for (const endpoint of ['create-session', 'get-session']) {
  const rs = apiRows.filter((r) => r.endpoint === endpoint);
  if (rs.length === 0) continue;
  const cast = rs as ApiRow[];
  row(
    `signed ${endpoint}`,
    cast,
    (x) => {
      const a = x as ApiRow[];
      return `${mean(a.map((r) => r.rps)).toFixed(0)} req/s, p50 ${mean(a.map((r) => r.p50)).toFixed(0)} ms, p99 ${mean(a.map((r) => r.p99)).toFixed(0)} ms`;
    },
    (x) => mean((x as ApiRow[]).map((r) => r.rps)),
    (l) => l.startsWith('api-'),
  );
}
for (const what of ['webhooks', 'payouts'] as const) {
  const rs = workerRows.filter((r) => r.what === what);
  if (rs.length === 0) continue;
  row(
    what === 'webhooks'
      ? `webhook deliveries (burst of ${EVENTS})`
      : `refund payouts (${PER_MERCHANT * MERCHANTS} from ${MERCHANTS} hot wallets)`,
    rs,
    (x) => `${mean((x as WorkerRow[]).map((r) => r.perSecond)).toFixed(what === 'payouts' ? 1 : 0)}/s`,
    (x) => mean((x as WorkerRow[]).map((r) => r.perSecond)),
    (l) => l.startsWith('worker-'),
  );
}
const bad = apiRows.reduce((t, r) => t + r.bad, 0);
out();
out(`API runs: ${bad} non-2xx, errors or timeouts in all.`);
if (deliveryCount) {
  const d = deliveryCount;
  out(
    `Webhooks, over all ${ORDER.length} measurements: ${d.events} events written, ${d.exactlyOnce} delivered exactly once, ${d.duplicated} delivered more than once (${d.extraHits} extra hits), ${d.missing} never delivered, ${d.unexpected} hits for unknown events; the service recorded ${attemptsPerEvent!.attempts} attempts for ${attemptsPerEvent!.events} events (${attemptsPerEvent!.retried} beyond the first).`,
  );
  if (d.duplicated > 0)
    out(
      '  Delivery is at least once, with the event id as the idempotency key: a duplicate is an attempt whose 200 reached the receiver but whose record did not commit before its job ran again (a lock lost, a process stopped).',
    );
}
if (payoutCount) {
  const p = payoutCount;
  out(
    `Refunds, over all ${ORDER.length} measurements: ${p.refunds} refunds, ${p.completed} completed; on chain ${p.paidOnce} paid exactly once, ${p.paidTwice} paid more than once, ${p.unpaid} completed without a transfer, ${p.unknownTransfers} transfers from the hot wallets that no attempt recorded; nonces: ${p.nonceGaps} gaps, ${p.nonceRepeats} repeats, ${p.chainNonceMismatches} hot wallets whose count on chain differs from the ledger's.`,
  );
}
out();
out('What bounds each ratio on this machine: CPU time per operation (µs, mean of all 4 runs), and the ceilings it sets');
out('(one service process gets at most one core, so does the load generator; the machine has all its cores for the sum):');
out();
out(
  '| measurement | service µs/op | postgres | redis | anvil | this process | sum | ceiling: 1 process | load generator | machine | ceiling of ratio 2/1 | measured |',
);
out('|---|---|---|---|---|---|---|---|---|---|---|---|');
const ceilings: Record<string, ReturnType<typeof ratioCeiling>> = {};
for (const [name, ratio] of Object.entries(ratios)) {
  const rs: Array<{ procs: number; cpu: CpuShare; rate: number }> = name.startsWith('signed')
    ? apiRows.filter((r) => name.endsWith(r.endpoint)).map((r) => ({ ...r, rate: r.rps }))
    : workerRows
        .filter((r) => (name.startsWith('webhook') ? r.what === 'webhooks' : r.what === 'payouts'))
        .map((r) => ({ ...r, rate: r.perSecond }));
  const svc = name.startsWith('signed') ? (l: string) => l.startsWith('api-') : (l: string) => l.startsWith('worker-');
  // CPU % of one core / operations per second = µs of CPU per operation × 1e-4.
  const us = (f: (c: CpuShare) => number) => mean(rs.map((r) => (f(r.cpu) / 100 / r.rate) * 1e6));
  const of = (which: (l: string) => boolean) => (c: CpuShare) => c.procs.filter(([l]) => which(l)).reduce((t, [, v]) => t + v, 0);
  const u = {
    service: us(of(svc)),
    postgres: us((c) => c.postgres),
    redis: us(of((l) => l === 'redis')),
    anvil: us(of((l) => l === 'anvil')),
    bench: us(of((l) => l === 'bench')),
  };
  const total = u.service + u.postgres + u.redis + u.anvil + u.bench;
  // The load generator's share: autocannon for the API; for the workers this process only receives and polls.
  const c = ratioCeiling({ serviceUs: u.service, generatorUs: name.startsWith('signed') ? u.bench : 0, totalUs: total, cores: CORES });
  ceilings[name] = c;
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(x < 100 ? 1 : 0) : '–');
  out(
    `| ${name} | ${u.service.toFixed(0)} | ${u.postgres.toFixed(0)} | ${u.redis.toFixed(0)} | ${u.anvil.toFixed(0)} | ${u.bench.toFixed(0)} | ${total.toFixed(0)} | ${f(c.perProcess)}/s | ${f(c.generator)}/s | ${f(c.machine)}/s | ${c.ratio.toFixed(2)} | ${ratio.toFixed(2)} |`,
  );
}
out();
for (const [name, ratio] of Object.entries(ratios)) {
  const rs: Array<{ procs: number; cpu: CpuShare }> = name.startsWith('signed')
    ? apiRows.filter((r) => name.endsWith(r.endpoint))
    : workerRows.filter((r) => (name.startsWith('webhook') ? r.what === 'webhooks' : r.what === 'payouts'));
  const two = pick(rs, 2);
  const one = pick(rs, 1);
  const machine2 = mean(two.map((r) => r.cpu.machine));
  const svc = name.startsWith('signed') ? (l: string) => l.startsWith('api-') : (l: string) => l.startsWith('worker-');
  const c = ceilings[name]!;
  const bound =
    c.one === c.machine
      ? 'the machine already bounds one process'
      : c.one === c.generator
        ? 'the load generator bounds one process'
        : 'one core bounds one process';
  out(
    `- ${name}: ×${ratio.toFixed(2)} (CPU ceiling ×${c.ratio.toFixed(2)}: ${bound}). With 2 processes the machine was ${machine2.toFixed(0)} % busy of ${CORES * 100} %: the service processes ${sumCpu(two, svc).toFixed(0)} % (1 process: ${sumCpu(one, svc).toFixed(0)} %), postgres ${mean(two.map((r) => r.cpu.postgres)).toFixed(0)} %, this process ${sumCpu(two, (l) => l === 'bench').toFixed(0)} %, redis ${sumCpu(two, (l) => l === 'redis').toFixed(0)} %${name.startsWith('refund') ? `, anvil ${sumCpu(two, (l) => l === 'anvil').toFixed(0)} %` : ''}, other work on the machine ${mean(two.map((r) => r.cpu.other)).toFixed(0)} %.`,
  );
}
const seen = warnings.filter((w) => /"level":(40|50|60)/.test(w));
if (seen.length) {
  out();
  out(`${seen.length} warnings or errors logged by the service processes; the first:`);
  for (const w of seen.slice(0, 5)) out(`  ${w}`);
}
if (process.env.BENCH_OUT) {
  // One line for the README's table (npm run bench); the whole printout stays in `report`.
  const twice = `${deliveryCount?.duplicated ?? '–'} events delivered twice, ${payoutCount?.paidTwice ?? '–'} refunds paid twice, ${payoutCount?.nonceGaps ?? '–'} nonce gaps`;
  const figures = `2 processes / 1: ${Object.entries(ratios)
    .map(([k, v]) => `${k} ×${v.toFixed(2)}`)
    .join(', ')}; ${twice}`;
  writeFileSync(
    process.env.BENCH_OUT,
    JSON.stringify({
      figures,
      target: 'nothing sent or delivered twice; ratios reported with their CPU bound (not a target on 2 cores)',
      met: (deliveryCount?.duplicated ?? 0) === 0 && (payoutCount?.paidTwice ?? 0) === 0 && (payoutCount?.nonceGaps ?? 0) === 0,
      report: lines.join('\n'),
      ratios,
      ceilings,
      deliveryCount,
      payoutCount,
    }),
  );
}

await receiver.close();
await h.close();
const cleanup = new Redis(h.env.REDIS_URL!);
let cursor = '0';
do {
  const [next, keys] = await cleanup.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
  cursor = next;
  if (keys.length) await cleanup.del(...keys);
} while (cursor !== '0');
cleanup.disconnect();
await teardown();
process.exit(0);
