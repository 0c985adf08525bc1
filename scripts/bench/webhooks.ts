import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import pg from 'pg';
import { createDb } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { insertOutboxEvents, type OutboxEventInput } from '../../src/ledger/core/outbox.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { benchPaymentEvent } from './bench-events.js';
import { startCountingReceiver } from './counting-receiver.js';
import { backendsCpu, backendsCpuSince } from './pg-backends-cpu.js';

// Webhook throughput and latency, from outbox row (its created_at) to the 2xx of a local receiver on 127.0.0.1.
// Relay and worker run in a child process (scripts/bench/webhooks-service.ts); the receiver and the event writer run
// here. Two phases: a burst (events/s with everything queued at once) and a paced load at --rate events/s (p50/p99
// latency). Uses a throw-away database and Redis prefix. Usage:
//   npx tsx scripts/bench/webhooks.ts [--burst 5000] [--rate 1000] [--seconds 5] [--merchants 10] [--concurrency 100]
// Prints figures; never fails on a timing. Target: >= 1,000 deliveries/s, p99 < 200 ms, no failures.
// Baselines, measured in the same run from the service's process: bare keep-alive POSTs to the same receiver and a
// bare BullMQ queue with no-op jobs (the work a delivery cannot avoid); the burst is printed as a ratio to them. Also
// prints database round trips (pg queries of relay and worker), commits, Redis commands (relay and worker) and the
// service process's CPU time per delivered event, and the CPU time of the database's Postgres backends (the service's
// and this process's event writes; Postgres on this host, /proc) per delivered event.
// BENCH_PROFILE=dir writes a CPU profile of the service process there; BENCH_OUT=file writes the JSON there too.

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const burst = Number(args.get('burst') ?? 5000);
const rate = Number(args.get('rate') ?? 1000);
const seconds = Number(args.get('seconds') ?? 5);
const merchants = Number(args.get('merchants') ?? 10);
const concurrency = Number(args.get('concurrency') ?? 100);
const adminUrl = process.env.DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const masterKey = randomBytes(32).toString('hex');

const dbName = `sp_bench_wh_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`create database ${dbName}`);
const dbUrl = new URL(adminUrl);
dbUrl.pathname = `/${dbName}`;
const db = createDb(dbUrl.toString(), 10);
await migrateToLatest(db);
const prefix = `sp_bench_wh_${randomBytes(4).toString('hex')}`;
const box = new SecretBox(masterKey);

// Receiver: answers 200 at once and notes when each event id got its 2xx.
const doneAt = new Map<string, number>();
let failures = 0;
const server = await startCountingReceiver((id) => {
  if (doneAt.has(id))
    failures++; // a duplicate would show up here
  else doneAt.set(id, Date.now());
});
const url = server.url;
const merchantIds: string[] = [];
for (let i = 0; i < merchants; i++) merchantIds.push((await createMerchant(db, box, { name: `bench-${i}`, webhookUrl: url })).merchantId);

const child = fork(new URL('./webhooks-service.ts', import.meta.url).pathname, [], {
  execArgv: ['--import', 'tsx', ...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [])],
  env: {
    ...process.env,
    WH_DATABASE_URL: dbUrl.toString(),
    WH_REDIS_URL: redisUrl,
    WH_PREFIX: prefix,
    WH_MASTER_KEY: masterKey,
    WH_CONCURRENCY: String(concurrency),
    WH_PER_MERCHANT: String(Math.max(1, Math.ceil((concurrency * 2) / merchants))),
  },
  stdio: 'inherit',
});
await new Promise<void>((resolve, reject) => {
  child.once('message', () => resolve());
  child.once('exit', (c) => reject(new Error(`service exited ${c}`)));
});
const ask = <T>(m: object) =>
  new Promise<T>((resolve) => {
    child.once('message', (r) => resolve(r as T));
    child.send(m);
  });
const commits = async () => {
  const { rows } = await admin.query<{ n: string }>('select xact_commit::text as n from pg_stat_database where datname = $1', [dbName]);
  return Number(rows[0]!.n);
};

// Baselines (the service starts its relay and worker once they are done, so they do not compete).
const baselineN = Math.max(500, Math.min(burst, 3000));
const baseline = await ask<{ posts: number; jobs: number }>({ cmd: 'baseline', url: `${url.replace('/hooks', '/bare')}`, n: baselineN });
const composed = 1 / (1 / baseline.posts + 1 / baseline.jobs);

let k = 0;
// The events of a batch are written as the ledger writes a block's events: one insertOutboxEvents statement in one
// transaction (src/ledger/core/outbox.ts), not one round trip per event inside the timed window.
async function emit(n: number): Promise<void> {
  const events: OutboxEventInput[] = [];
  for (let i = 0; i < n; i++, k++) events.push(benchPaymentEvent(merchantIds[k % merchantIds.length]!, k));
  await db.transaction().execute((trx) => insertOutboxEvents(trx, events));
}

async function waitAll(total: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (doneAt.size < total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

async function latencies(): Promise<number[]> {
  const { rows } = await sql<{
    id: string;
    ms: number;
  }>`select id, (extract(epoch from created_at) * 1000)::float8 as ms from outbox_events`.execute(db);
  return rows
    .filter((r) => doneAt.has(r.id))
    .map((r) => doneAt.get(r.id)! - r.ms)
    .sort((a, b) => a - b);
}
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

// Phase 1: burst.
type Counters = { queries: number; redisCommands: number; cpuMicros: number };
const s0 = await ask<Counters>({ cmd: 'queries' });
const q0 = s0.queries;
const c0 = await commits();
const pg0 = await backendsCpu(admin, dbName);
const t0 = Date.now();
for (let done = 0; done < burst; done += 500) await emit(Math.min(500, burst - done));
await waitAll(burst, 120_000);
const burstMs = Date.now() - t0;
const burstDelivered = doneAt.size;
await new Promise((r) => setTimeout(r, 500)); // the last attempt records
const s1 = await ask<Counters>({ cmd: 'queries' });
const burstQueries = s1.queries - q0;
const burstRedis = s1.redisCommands - s0.redisCommands;
const burstCpuMs = (s1.cpuMicros - s0.cpuMicros) / 1000;
const burstPgCpuUs = backendsCpuSince(pg0, await backendsCpu(admin, dbName));
// The bench's own inserts are 1 commit per 500 events; stats lag up to 500 ms (stats_fetch_consistency).
const burstCommits = (await commits()) - c0;

// Phase 2: paced.
await sql`truncate outbox_events cascade`.execute(db);
doneAt.clear();
const total = rate * seconds;
const tick = 20;
const perTick = Math.max(1, Math.round((rate * tick) / 1000));
const t1 = Date.now();
for (let sent = 0; sent < total; ) {
  const due = Math.min(total, Math.floor(((Date.now() - t1) / 1000) * rate) + perTick);
  if (due > sent) {
    await emit(due - sent);
    sent = due;
  }
  await new Promise((r) => setTimeout(r, tick));
}
await waitAll(total, 60_000);
const paced = await latencies();
// The receiver's 2xx comes before the attempt record commits: give the last records up to 10 s before counting.
const undelivered = async () =>
  (await sql<{ n: number }>`select count(*)::int as n from webhook_deliveries where status <> 'delivered'`.execute(db)).rows[0]!.n;
for (const until = Date.now() + 10_000; (await undelivered()) > 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 100));
const notDelivered = [{ n: await undelivered() }];

const burstRate = (burstDelivered / burstMs) * 1000;
const p99 = Math.round(pct(paced, 99));
const result = {
  figures: `paced ${rate.toLocaleString('en')}/s (${total.toLocaleString('en')} events): p50 ${Math.round(pct(paced, 50))} ms, p99 ${p99} ms; burst of ${burst.toLocaleString('en')} drained at ${Math.round(burstRate)}/s = ${(burstRate / composed).toFixed(2)}× the composed limit of the same run (bare POSTs ${Math.round(baseline.posts)}/s, bare BullMQ ${Math.round(baseline.jobs)}/s); ${(burstQueries / Math.max(1, burstDelivered)).toFixed(2)} DB queries, ${(burstCommits / Math.max(1, burstDelivered)).toFixed(2)} commits and ${(burstRedis / Math.max(1, burstDelivered)).toFixed(2)} Redis commands and ${((burstCpuMs * 1000) / Math.max(1, burstDelivered)).toFixed(0)} µs of service CPU and ${(burstPgCpuUs / Math.max(1, burstDelivered)).toFixed(0)} µs of Postgres CPU per delivery; ${failures} duplicates`,
  target: 'paced 1,000/s p99 < 200 ms; burst ≥ 1,500/s',
  met: rate >= 1000 && p99 < 200 && burstRate >= 1500 && failures === 0,
  baseline: {
    bare_posts_per_second: Math.round(baseline.posts),
    bare_bullmq_jobs_per_second: Math.round(baseline.jobs),
    composed_limit_per_second: Math.round(composed),
  },
  burst: {
    events: burst,
    delivered: burstDelivered,
    seconds: burstMs / 1000,
    events_per_second: Math.round(burstRate),
    ratio_to_composed: Number((burstRate / composed).toFixed(2)),
    db_queries_per_delivery: Number((burstQueries / Math.max(1, burstDelivered)).toFixed(2)),
    db_commits_per_delivery: Number((burstCommits / Math.max(1, burstDelivered)).toFixed(2)),
    redis_commands_per_delivery: Number((burstRedis / Math.max(1, burstDelivered)).toFixed(2)),
    service_cpu_us_per_delivery: Math.round((burstCpuMs * 1000) / Math.max(1, burstDelivered)),
    postgres_cpu_us_per_delivery: Math.round(burstPgCpuUs / Math.max(1, burstDelivered)),
  },
  paced: {
    rate_per_second: rate,
    events: total,
    delivered: paced.length,
    latency_ms: {
      p50: Math.round(pct(paced, 50)),
      p90: Math.round(pct(paced, 90)),
      p99: Math.round(pct(paced, 99)),
      max: Math.round(paced[paced.length - 1] ?? NaN),
    },
  },
  not_delivered: notDelivered[0]!.n,
  duplicate_deliveries: failures,
  merchants,
  concurrency,
};
console.log(JSON.stringify(result, null, 2));
if (process.env.BENCH_OUT) writeFileSync(process.env.BENCH_OUT, JSON.stringify(result));

child.send({ cmd: 'stop' });
await new Promise((r) => child.once('exit', r));
await server.close();
await db.destroy();
await admin.query(`drop database if exists ${dbName} with (force)`);
await admin.end();
const redis = new Redis(redisUrl);
let cursor = '0';
do {
  const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
  cursor = next;
  if (keys.length) await redis.del(...keys);
} while (cursor !== '0');
redis.disconnect();
