import { Redis } from 'ioredis';
import { buildServer } from './api/server.js';
import { ConfigError, loadConfig, loadDotEnv, type Config } from './config.js';
import { createDb } from './db/database.js';
import { ensureDatabase } from './db/ensure-database.js';
import { migrateToLatest } from './db/migrate.js';
import { createExpiryScheduler, startExpiryWorker } from './jobs/session-expiry.js';
import { createRateService } from './rates/index.js';
import { SecretBox } from './security/secret-box.js';

// Process roles: `api`, `worker`, `watcher`, or all in one process (the default). See docs/architecture.md.

interface Stoppable {
  stop(): Promise<void>;
}

export async function start(config: Config): Promise<Stoppable> {
  await ensureDatabase(config.DATABASE_URL);
  const db = createDb(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
  if (config.MIGRATE_ON_START) await migrateToLatest(db);
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 3, lazyConnect: false });
  redis.on('error', () => {}); // reconnects on its own; /readyz reports the outage
  const box = new SecretBox(config.MASTER_KEY);
  const queueCtx = { connection: redis, prefix: config.REDIS_KEY_PREFIX };
  const stops: Array<() => Promise<void>> = [];

  if (config.ROLES.includes('worker')) {
    const expiry = await startExpiryWorker(queueCtx, { db, sweepIntervalMs: config.EXPIRY_SWEEP_INTERVAL_MS });
    stops.push(() => expiry.stop());
  }

  if (config.ROLES.includes('api')) {
    const scheduler = createExpiryScheduler(queueCtx);
    const app = await buildServer({
      db,
      redis,
      box,
      rates: createRateService({
        sources: config.RATE_SOURCES.split(',').map((s) => s.trim()).filter(Boolean),
        coinbaseBaseUrl: config.RATE_COINBASE_BASE_URL,
        binanceBaseUrl: config.RATE_BINANCE_BASE_URL,
        timeoutMs: config.RATE_TIMEOUT_MS,
        cacheTtlMs: config.RATE_CACHE_TTL_MS,
      }),
      checkoutBaseUrl: config.checkoutBaseUrl,
      docsUrl: config.DOCS_URL,
      redisPrefix: config.REDIS_KEY_PREFIX,
      authWindowSeconds: config.AUTH_TIMESTAMP_WINDOW_SECONDS,
      maxBodyBytes: config.MAX_BODY_BYTES,
      logLevel: config.LOG_LEVEL,
      onSessionCreated: (s) => scheduler.schedule(s),
    });
    await app.listen({ host: config.HOST, port: config.PORT });
    stops.unshift(async () => {
      await app.close();
      await scheduler.close();
    });
  }

  return {
    async stop() {
      for (const s of stops) await s();
      redis.disconnect();
      await db.destroy();
    },
  };
}

async function run(): Promise<void> {
  loadDotEnv();
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const service = await start(config);
  process.stdout.write(`${JSON.stringify({ level: 30, time: Date.now(), msg: 'service started', roles: config.ROLES, port: config.PORT })}\n`);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${JSON.stringify({ level: 30, time: Date.now(), msg: 'stopping', signal })}\n`);
    service.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  run().catch((err: unknown) => {
    process.stderr.write(`${JSON.stringify({ level: 60, time: Date.now(), msg: 'start-up failed', err: (err as Error).message })}\n`);
    process.exit(1);
  });
}
