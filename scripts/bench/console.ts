// Console benchmark (issue 35, Performance). Prints figures; never fails on a timing.
//   npm run bench:console [-- --sessions 1000000 --refunds 100000 --merchants 1000 --deliveries 200000 --reps 30]
// A private database (stablepay_bench_console, dropped and recreated each run), migrated, seeded by set-based SQL
// (test/support/console-seed.ts: a year of sessions, deposits, refunds with payout attempts, webhook deliveries,
// audit rows over N merchants), VACUUM ANALYZE; then the real console server (buildConsoleServer, the session hook
// and every route) driven by Fastify inject, signed in by a session cookie as an operator and as a merchant user.
// Each route: one warm-up, then --reps requests; p50/p95/max of the server time against the issue's targets. A
// baseline in the same run: GET /api/networks (the whole request path without a table read) and `select 1`.
// BENCH_KEEP_DB=1 keeps the database at the end; --reuse measures again over it without seeding.
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { sql } from 'kysely';
import { ChainRegistry } from '../../chains/chain-registry.js';
import { createRateLimiter } from '../../src/api/rate-limit.js';
import { newSessionToken, sessionIdHash } from '../../src/console/auth/cookie.js';
import type { ConsoleDeps } from '../../src/console/deps.js';
import { buildConsoleServer } from '../../src/console/server.js';
import { createDb } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { systemClock } from '../../src/domain/clock.js';
import { foldOverviewDeltas } from '../../src/ledger/console/overview-daily.js';
import { insertConsoleSession } from '../../src/ledger/console/sessions.js';
import { insertConsoleUser } from '../../src/ledger/console/users.js';
import { createLogger } from '../../src/logger.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { TEST_MASTER_KEY } from '../../test/support/api-harness.js';
import { depositAddressOf, merchantIdOf, seedConsoleData, sessionIdOf, txHashOf } from '../../test/support/console-seed.js';

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '1000000' },
    refunds: { type: 'string', default: '100000' },
    merchants: { type: 'string', default: '1000' },
    deliveries: { type: 'string', default: '200000' },
    reps: { type: 'string', default: '30' },
    // Measure again over the database a previous run kept (BENCH_KEEP_DB=1) instead of seeding a new one.
    reuse: { type: 'boolean', default: false },
  },
});
const size = {
  sessions: Number(values.sessions),
  refunds: Number(values.refunds),
  merchants: Number(values.merchants),
  deliveries: Number(values.deliveries),
};
const REPS = Number(values.reps);
const ADMIN = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DB_NAME = 'stablepay_bench_console';

const admin = new pg.Client({ connectionString: ADMIN });
await admin.connect();
if (!values.reuse) {
  await admin.query(`drop database if exists ${DB_NAME} with (force)`);
  await admin.query(`create database ${DB_NAME}`);
}
const url = new URL(ADMIN);
url.pathname = `/${DB_NAME}`;
const db = createDb(url.toString(), 10);
const redis = new Redis(REDIS, { maxRetriesPerRequest: 2 });

const now = new Date();
const t0 = performance.now();
await migrateToLatest(db);
let seeded = 0;
let folded: number | null = 0;
let foldSeconds = 0;
if (!values.reuse) {
  await seedConsoleData(db, { ...size, now, box: new SecretBox(TEST_MASTER_KEY) });
  seeded = (performance.now() - t0) / 1000;
  // Fold the overview deltas the seed's inserts left (the first overview would; timed apart from the routes).
  const tFold = performance.now();
  folded = await foldOverviewDeltas(db);
  foldSeconds = (performance.now() - tFold) / 1000;
  await sql`vacuum analyze`.execute(db);
}
const analyzed = (performance.now() - t0) / 1000;
const counts = await sql<{ t: string; n: string }>`
  select 'payment_sessions' as t, count(*)::text as n from payment_sessions union all
  select 'deposits', count(*)::text from deposits union all select 'refunds', count(*)::text from refunds union all
  select 'payout_attempts', count(*)::text from payout_attempts union all
  select 'webhook_deliveries', count(*)::text from webhook_deliveries union all select 'merchants', count(*)::text from merchants`.execute(
  db,
);

const deps: ConsoleDeps = {
  ops: {
    db,
    box: new SecretBox(TEST_MASTER_KEY),
    redis,
    redisPrefix: 'sp_bench_console',
    chains: new ChainRegistry([]),
    clock: systemClock,
    log: createLogger('silent'),
    enqueuePayout: async () => {},
    checkoutBaseUrl: 'http://checkout.test/pay',
    env: {},
  },
  settings: {
    secureCookies: false,
    idleTimeoutMs: 30 * 60_000,
    absoluteTimeoutMs: 12 * 3600_000,
    loginFailuresPerAccount: 5,
    loginFailuresPerIp: 20,
    demo: false,
    uiDir: null,
    liveIntervalMs: 1000,
  },
  limiter: createRateLimiter({ redis, prefix: 'sp_bench_console' }),
  docsUrl: 'https://docs.test/errors',
};
const app = await buildConsoleServer(deps, { logLevel: 'silent', trustProxy: false, requestTimeoutMs: 30_000 });
await app.ready();

/** A signed-in console session (second factor done) for a new user of this role: its cookie. */
async function signIn(role: 'operator' | 'merchant', merchantId: string | null): Promise<string> {
  const user = await insertConsoleUser(db, {
    email: `${role}-${merchantId ?? 'all'}-${Math.random().toString(36).slice(2, 8)}@bench.test`,
    role,
    merchantId,
    passwordHash: 'unused',
    mustChangePassword: false,
  });
  // Operators must have TOTP on; the benchmark signs in past it (a session with the second factor done).
  await sql`update console_users set totp_secret_enc = 'sealed', totp_enabled_at = now() where id = ${user.id}`.execute(db);
  const token = newSessionToken();
  await insertConsoleSession(db, {
    idHash: sessionIdHash(token),
    userId: user.id,
    csrfToken: 'unused',
    secondFactorDone: true,
    ip: '127.0.0.1',
    userAgent: 'bench',
    expiresAt: new Date(Date.now() + 12 * 3600_000),
  });
  return `sp_console=${token}`;
}
const busyMerchant = merchantIdOf(2);
const operator = await signIn('operator', null);
const merchant = await signIn('merchant', busyMerchant);
for (let m = 3; m <= 5; m++) await signIn('merchant', merchantIdOf(m));

async function get(cookie: string, path: string): Promise<{ ms: number; body: any }> {
  const t = performance.now();
  const r = await app.inject({ method: 'GET', url: `/api${path}`, headers: { cookie } });
  const ms = performance.now() - t;
  if (r.statusCode !== 200) throw new Error(`GET ${path}: ${r.statusCode} ${r.body.slice(0, 300)}`);
  return { ms, body: r.json() };
}

// Values to look up: a session in the middle of the year (of the merchant user's merchant: i % M = 1).
const M = size.merchants;
const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
const period = (20 * M) / gcd(20, M);
const mid = Math.floor(size.sessions / 2 / period) * period + 1; // i ≡ 1 (mod 20 and mod M): paid, of merchant 2
const sid = sessionIdOf(mid);
const day = 86_400_000;
const week = (from: number) =>
  `created_from=${new Date(now.getTime() - from * day).toISOString()}&created_to=${new Date(now.getTime() - (from - 7) * day).toISOString()}`;
const opFirst = await get(operator, '/payments');
const opCursor = opFirst.body.next_cursor as string;
const mFirst = await get(merchant, '/payments');
const mCursor = mFirst.body.next_cursor as string;
const refundOfMid = (await get(operator, `/refunds?merchant_id=${busyMerchant}&limit=1`)).body.data[0]?.id as string;

type Target = 'list' | 'search' | 'overview' | 'detail';
const LIMIT: Record<Target, number> = { list: 200, search: 50, overview: 300, detail: 200 };
const cases: { name: string; as: string; path: string; target: Target }[] = [];
const add = (target: Target, as: 'op' | 'mu', name: string, path: string) =>
  cases.push({ name: `${as === 'op' ? 'operator' : 'merchant'} ${name}`, as: as === 'op' ? operator : merchant, path, target });
for (const as of ['op', 'mu'] as const) {
  add('list', as, 'payments newest', '/payments');
  add('list', as, 'payments page 2', `/payments?cursor=${encodeURIComponent(as === 'op' ? opCursor : mCursor)}`);
  add('list', as, 'payments oldest', '/payments?order=asc');
  add('list', as, 'payments status=paid', '/payments?status=paid');
  add('list', as, 'payments status=canceled', '/payments?status=canceled');
  add('list', as, 'payments status=open', '/payments?status=open');
  add('list', as, 'payments tron USDT', '/payments?network=tron&token=USDT');
  add('list', as, 'payments mode=test', '/payments?mode=test');
  add('list', as, 'payments by amount', '/payments?sort=amount');
  add('list', as, 'payments amount asc', '/payments?sort=amount&order=asc');
  add('list', as, 'payments a week, 6 months ago', `/payments?${week(180)}`);
  add('list', as, 'payments amount 10-20 USD', '/payments?amount_min=10.00&amount_max=20.00');
  add('list', as, 'payments week+expired+amount', `/payments?${week(90)}&status=expired&sort=amount`);
  add('search', as, 'payments q=tx hash', `/payments?q=${txHashOf(mid)}`);
  add('search', as, 'payments q=address', `/payments?q=${depositAddressOf(mid)}`);
  add('search', as, 'payments q=order id', `/payments?q=order-${mid}`);
  add('search', as, 'search tx hash', `/search?q=${txHashOf(mid)}`);
  add('search', as, 'search address', `/search?q=${depositAddressOf(mid)}`);
  add('search', as, 'search order id', `/search?q=order-${mid}`);
  add('search', as, 'search session id', `/search?q=${sid}`);
  add('search', as, 'search miss', '/search?q=nothing-like-this');
  add('detail', as, 'payment detail', `/payments/${sid}`);
  add('list', as, 'refunds newest', '/refunds');
  add('list', as, 'refunds status=failed', '/refunds?status=failed');
  add('list', as, 'refunds network=solana', '/refunds?network=solana');
  add('list', as, 'refunds a week', `/refunds?${week(100)}`);
  if (refundOfMid) add('detail', as, 'refund detail', `/refunds/${refundOfMid}`);
  add('list', as, 'stranded deposits', '/stranded?kind=deposit');
  add('list', as, 'stranded sessions', '/stranded?kind=session');
  add('list', as, 'webhook deliveries', '/webhooks/deliveries');
  add('list', as, 'webhook deliveries failed', '/webhooks/deliveries?status=failed');
  add('list', as, 'subscriptions', '/subscriptions');
  add('list', as, 'api keys', '/keys');
  add('overview', as, 'overview', '/overview');
}
add('list', 'op', 'payments of one merchant', `/payments?merchant_id=${busyMerchant}`);
add('list', 'op', 'refunds of one merchant', `/refunds?merchant_id=${busyMerchant}`);
add('list', 'op', 'audit', '/audit');
add('list', 'op', 'users', '/users');
add('list', 'op', 'merchants', '/merchants');
add('list', 'op', 'sweeps', '/sweeps');
add('list', 'op', 'reconcile runs', '/reconcile/runs');
add('list', 'op', 'journal unexplained', '/journal/unexplained');
add('overview', 'op', 'overview of one merchant', `/overview?merchant_id=${busyMerchant}`);

// Baselines: a pg round-trip, and the console's request path (cookie → session → user) on a route without a table.
const baseline: { name: string; ms: number[] }[] = [
  { name: 'select 1 (pg round-trip)', ms: [] },
  { name: 'GET /api/networks (request path)', ms: [] },
];
for (let r = 0; r < REPS; r++) {
  let t = performance.now();
  await sql`select 1`.execute(db);
  baseline[0]!.ms.push(performance.now() - t);
  t = performance.now();
  await get(operator, '/networks');
  baseline[1]!.ms.push(performance.now() - t);
}

const q = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const f = (x: number) => x.toFixed(1).padStart(7);
const rows: string[] = [];
let failures = 0;
for (const c of cases) {
  await get(c.as, c.path); // warm-up
  const ms: number[] = [];
  for (let r = 0; r < REPS; r++) ms.push((await get(c.as, c.path)).ms);
  const p95 = q(ms, 95);
  const ok = p95 < LIMIT[c.target];
  if (!ok) failures++;
  rows.push(
    `| ${c.name.padEnd(44)} | ${c.target.padEnd(8)} | ${f(q(ms, 50))} | ${f(p95)} | ${f(Math.max(...ms))} |     < ${String(LIMIT[c.target]).padStart(3)} | ${ok ? 'yes' : 'NO '} |`,
  );
}

const os = await import('node:os');
console.log(
  `Console benchmark, ${new Date().toISOString()} on ${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}, load average ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
console.log(`Rows: ${counts.rows.map((r) => `${r.t} ${Number(r.n).toLocaleString('en')}`).join(', ')}`);
console.log(
  values.reuse
    ? `Over the database a previous run kept (--reuse); ${REPS} requests per route after one warm-up (Fastify inject: server time)`
    : `Seeded in ${seeded.toFixed(0)} s (then ${folded ?? 0} overview deltas folded in ${foldSeconds.toFixed(1)} s; with VACUUM ANALYZE ${analyzed.toFixed(0)} s); ${REPS} requests per route after one warm-up (Fastify inject: server time)`,
);
console.log('');
console.log(`| ${'route'.padEnd(44)} | target   |  p50 ms |  p95 ms |  max ms | p95 limit | met |`);
console.log(`|${'-'.repeat(46)}|----------|---------|---------|---------|-----------|-----|`);
for (const b of baseline)
  console.log(
    `| ${`baseline: ${b.name}`.padEnd(44)} | -        | ${f(q(b.ms, 50))} | ${f(q(b.ms, 95))} | ${f(Math.max(...b.ms))} |         - |  -  |`,
  );
for (const r of rows) console.log(r);
console.log('');
console.log(failures === 0 ? 'Every route met its target.' : `${failures} route(s) over their target.`);

await app.close();
await db.destroy();
redis.disconnect();
if (!process.env.BENCH_KEEP_DB) await admin.query(`drop database if exists ${DB_NAME} with (force)`);
await admin.end();
