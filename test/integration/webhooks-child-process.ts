import { Redis } from 'ioredis';
import { createDb } from '../../src/db/database.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { startDeliveryWorker, startOutboxRelay } from '../../src/webhooks/index.js';

// A relay or delivery worker in its own process, for the SIGKILL tests. Configured by environment; prints
// "ready" once running and runs until killed.
const env = (k: string) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} unset`);
  return v;
};
const role = env('WH_ROLE');
const db = createDb(env('WH_DATABASE_URL'), 10);
const redis = new Redis(env('WH_REDIS_URL'), { maxRetriesPerRequest: null });
const prefix = env('WH_PREFIX');
const enqueueDelayMs = Number(process.env.WH_AFTER_ENQUEUE_DELAY_MS ?? 0);

if (role === 'relay') {
  startOutboxRelay({
    db,
    redis,
    prefix,
    databaseUrl: env('WH_DATABASE_URL'),
    batchSize: Number(process.env.WH_BATCH_SIZE ?? 25),
    pollIntervalMs: 100,
    // Widens the window between enqueue and commit so that a kill lands inside it.
    afterEnqueue: async (ids) => {
      process.stdout.write(`enqueued ${ids.length}\n`);
      if (enqueueDelayMs) await new Promise((r) => setTimeout(r, enqueueDelayMs));
    },
  });
} else {
  startDeliveryWorker({
    db,
    redis,
    box: new SecretBox(env('WH_MASTER_KEY')),
    prefix,
    retrySchedule: [100, 200, 300, 400, 500],
    timeoutMs: 2000,
    concurrency: Number(process.env.WH_CONCURRENCY ?? 20),
    perMerchantConcurrency: 20,
    allowPrivateTargetsInTest: true,
    lockDurationMs: 2000,
    stalledIntervalMs: 500,
    reconcileIntervalMs: 500,
    reconcileGraceMs: 3000,
  });
}
process.stdout.write('ready\n');
