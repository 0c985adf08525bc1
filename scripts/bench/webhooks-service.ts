import { Redis } from 'ioredis';
import { createDb } from '../../src/db/database.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { startDeliveryWorker, startOutboxRelay } from '../../src/webhooks/index.js';

// The relay and the delivery worker of the webhook benchmark, in their own process (scripts/bench/webhooks.ts).
const e = process.env;
const db = createDb(e.WH_DATABASE_URL!, 20);
const redis = new Redis(e.WH_REDIS_URL!, { maxRetriesPerRequest: null });
const relay = startOutboxRelay({ db, redis, prefix: e.WH_PREFIX!, databaseUrl: e.WH_DATABASE_URL!, batchSize: 500, pollIntervalMs: 100 });
const worker = startDeliveryWorker({
  db,
  redis,
  box: new SecretBox(e.WH_MASTER_KEY!),
  prefix: e.WH_PREFIX!,
  concurrency: Number(e.WH_CONCURRENCY ?? 100),
  perMerchantConcurrency: Number(e.WH_PER_MERCHANT ?? 50),
  allowPrivateTargetsInTest: true,
});
process.send?.('ready');
process.on('message', async (m) => {
  if (m !== 'stop') return;
  await relay.stop();
  await worker.stop();
  redis.disconnect();
  await db.destroy();
  process.exit(0);
});
