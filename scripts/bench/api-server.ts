import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { buildServer } from '../../src/api/server.js';
import { RATE_LIMITS_OFF } from '../../src/api/rate-limit-http.js';
import { createDb } from '../../src/db/database.js';
import { ensureDatabase } from '../../src/db/ensure-database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createMerchant } from '../../src/ledger/merchants.js';
import { createRateService } from '../../src/rates/index.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { startMetricsServer } from '../../src/metrics/server.js';

// Child process of scripts/bench/api.ts: the real API (real Postgres and Redis) on one port and a bare Fastify
// route on another, so the load generator and the server do not share an event loop.
const dbUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/stablepay_bench';
await ensureDatabase(dbUrl);
const db = createDb(dbUrl, 20);
await migrateToLatest(db);
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
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
process.on('message', async (msg) => {
  if (msg === 'cpu') {
    const u = process.cpuUsage();
    process.send?.({ cpuMicros: u.user + u.system });
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
    process.exit(0);
  }
});
