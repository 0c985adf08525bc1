import { randomUUID } from 'node:crypto';
import { Socket } from 'node:net';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { Redis } from 'ioredis';
import pg from 'pg';
import { buildServer } from '../../src/api/server.js';
import { RATE_LIMITS_OFF } from '../../src/api/rate-limit-http.js';
import { createDb } from '../../src/db/database.js';
import { ensureDatabase } from '../../src/db/ensure-database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { createRateService } from '../../src/rates/index.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { startMetricsServer } from '../../src/metrics/server.js';
import { connectRedis } from '../../src/start/redis.js';

// Child process of scripts/bench/api.ts: the real API (real Postgres and Redis) on one port and a bare Fastify
// route on another, so the load generator and the server do not share an event loop.
const dbUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/stablepay_bench';
// A fresh database every run: sessions left by earlier runs would make each run measure a bigger table than the last.
await dropDatabase(dbUrl);
await ensureDatabase(dbUrl);
const db = createDb(dbUrl, 20, { namedStatements: true }); // as main.ts with DATABASE_POOL_MODE=direct
await migrateToLatest(db);
// REDIS_URL as the service reads it (src/start/redis.ts): `redis://…` or `unix:///path` (api.ts --transport).
const redis = connectRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const box = new SecretBox('42'.repeat(32));
const m = await createMerchant(db, box, { name: 'bench' });
const serverDeps = (httpMetrics: boolean) => ({
  httpMetrics,
  db,
  redis,
  box,
  rates: createRateService({ sources: ['peg'], timeoutMs: 1000, cacheTtlMs: 30_000 }),
  checkoutBaseUrl: 'http://localhost/pay',
  docsUrl: 'http://localhost/docs',
  redisPrefix: 'sp_bench',
  authWindowSeconds: 300,
  maxBodyBytes: 65_536,
  sessionLifetimeSeconds: 1800,
  logLevel: 'silent',
  // Thousands of requests per second with one key from one IP: the limits would measure themselves, not the API.
  // BENCH_RATE_LIMITS=checked runs every check against limits too high to refuse, to measure what checking costs.
  rateLimits:
    process.env.BENCH_RATE_LIMITS === 'checked'
      ? { perKeyPerSecond: 1_000_000, perIpPerSecond: 1_000_000, authFailuresPerIpPerMinute: 1_000_000 }
      : RATE_LIMITS_OFF,
});
const app = await buildServer(serverDeps(false));
// The same API with HTTP metrics on, and the metrics listener the load generator scrapes while it runs.
const metered = await buildServer(serverDeps(true));
const metricsServer = await startMetricsServer({ host: '127.0.0.1', port: 0 });
const bare = Fastify({ logger: false });
bare.get('/bare', async () => ({ ok: true }));
bare.post('/bare', async () => ({ ok: true }));
const apiUrl = await app.listen({ host: '127.0.0.1', port: 0 });
const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 });
const meteredUrl = await metered.listen({ host: '127.0.0.1', port: 0 });
const metricsUrl = `http://127.0.0.1:${metricsServer.port}/metrics`;
process.send?.({ apiUrl, bareUrl, meteredUrl, metricsUrl, key: m.testKey.key, secret: m.testKey.secret });
// Round trips this process starts, counted where they leave: every statement given to a pg client, every command
// given to an ioredis connection (an auto-pipelined batch still counts each of its commands).
const counted = { pg: 0, redis: 0, pgWrites: 0, redisWrites: 0 };
// And the socket write calls that carry them (an auto-pipelined batch of commands is one; pg corks a statement's
// protocol messages, several calls, into one writev), by the socket: each client's socket is known once it sends, over
// TCP or a Unix-domain socket alike.
const pgSockets = new WeakSet<object>();
const redisSockets = new WeakSet<object>();
const socketWrite = Socket.prototype.write;
Socket.prototype.write = function (this: Socket, ...args: Parameters<typeof socketWrite>) {
  if (pgSockets.has(this)) counted.pgWrites++;
  else if (redisSockets.has(this)) counted.redisWrites++;
  return socketWrite.apply(this, args);
} as typeof socketWrite;
const pgQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: Parameters<typeof pgQuery>) {
  counted.pg++;
  const stream = (this as unknown as { connection?: { stream?: object } }).connection?.stream;
  if (stream) pgSockets.add(stream);
  return pgQuery.apply(this, args);
} as typeof pgQuery;
const redisSend = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<typeof redisSend>) {
  counted.redis++;
  if (this.stream) redisSockets.add(this.stream);
  return redisSend.apply(this, args);
};
// The work a signed request cannot avoid, measured from this process with the same pool, for the composed limit
// (scripts/bench/api.ts): a transaction inserting a session-sized row and an outbox-sized row, a primary-key select,
// a Redis SET NX with expiry (the nonce). Each runs `concurrency` loops for `seconds`; answers operations per second.
await sql`create table if not exists bench_session (id text primary key, merchant_id text not null, body jsonb not null,
  created_at timestamptz not null default now())`.execute(db);
await sql`create table if not exists bench_outbox (seq bigserial primary key, id text not null, payload jsonb not null)`.execute(db);
const row = JSON.stringify({ amount: '19.99', currency: 'USD', order_id: 'bench', metadata: {}, quotes: { USDT: '19.99', USDC: '19.99' } });
async function opsPerSecond(seconds: number, concurrency: number, op: () => Promise<unknown>): Promise<number> {
  let n = 0;
  const until = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        await op();
        n++;
      }
    }),
  );
  return n / ((performance.now() - t0) / 1000);
}
async function baselines(seconds: number, concurrency: number, sessionId: string) {
  const insertTx = await opsPerSecond(seconds, concurrency, () =>
    db.transaction().execute(async (trx) => {
      const id = `cs_${randomUUID()}`;
      await sql`insert into bench_session (id, merchant_id, body) values (${id}, ${m.merchantId}, ${row}::jsonb)`.execute(trx);
      await sql`insert into bench_outbox (id, payload) values (${id}, ${row}::jsonb)`.execute(trx);
    }),
  );
  const pkSelect = await opsPerSecond(seconds, concurrency, () => sql`select * from payment_sessions where id = ${sessionId}`.execute(db));
  const redisSet = await opsPerSecond(seconds, concurrency, () => redis.set(`sp_bench:b:${randomUUID()}`, '1', 'EX', 60, 'NX'));
  return { insertTx, pkSelect, redisSet };
}
process.on('message', async (msg) => {
  if (msg && typeof msg === 'object' && 'baselines' in msg) {
    const b = msg as { baselines: { seconds: number; concurrency: number; sessionId: string } };
    process.send?.({ baselines: await baselines(b.baselines.seconds, b.baselines.concurrency, b.baselines.sessionId) });
    return;
  }
  if (msg === 'cpu') {
    const u = process.cpuUsage();
    process.send?.({
      cpuMicros: u.user + u.system,
      pgStatements: counted.pg,
      redisCommands: counted.redis,
      pgWrites: counted.pgWrites,
      redisWrites: counted.redisWrites,
    });
    return;
  }
  if (msg === 'stop') {
    await app.close();
    await metered.close();
    await metricsServer.close();
    await bare.close();
    const keys = await redis.keys('sp_bench:*');
    for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
    redis.disconnect();
    await db.destroy();
    await dropDatabase(dbUrl);
    process.exit(0);
  }
});

async function dropDatabase(url: string): Promise<void> {
  const u = new URL(url);
  const name = u.pathname.slice(1);
  u.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: u.toString() });
  await admin.connect();
  try {
    await admin.query(`drop database if exists "${name.replace(/"/g, '""')}" with (force)`);
  } finally {
    await admin.end();
  }
}
