import { request, type Agent } from 'node:http';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createDb } from '../../src/db/database.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { startDeliveryWorker, startOutboxRelay } from '../../src/webhooks/index.js';
import { createPostAgents } from '../../src/webhooks/http-post.js';

// The relay and the delivery worker of the webhook benchmark, in their own process (scripts/bench/webhooks.ts).
// It also runs the baselines of that benchmark from this same process (so they pay what the worker pays): bare
// keep-alive POSTs to the receiver, and a bare BullMQ queue whose jobs do nothing. It counts the database round
// trips it makes (every pg query, the relay's and the worker's) and the Redis commands it sends, so the benchmark can
// print them per delivery, with the CPU time this process spends (steadier than wall time on a shared machine).
const e = process.env;
let queries = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
  queries++;
  return (query as (...x: unknown[]) => unknown).apply(this, a);
} as typeof query;
// Redis commands sent by every connection of this process (BullMQ's Lua calls count one each), once per command.
let redisCommands = 0;
const sent = new WeakSet<object>();
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (this: Redis, ...a: Parameters<typeof sendCommand>) {
  if (!sent.has(a[0])) {
    sent.add(a[0]);
    redisCommands++;
  }
  return sendCommand.apply(this, a);
} as typeof sendCommand;

const concurrency = Number(e.WH_CONCURRENCY ?? 100);
const db = createDb(e.WH_DATABASE_URL!, Number(e.WH_POOL ?? 20));
const redis = new Redis(e.WH_REDIS_URL!, { maxRetriesPerRequest: null });

async function barePosts(url: string, n: number): Promise<number> {
  const agents = createPostAgents(concurrency);
  const body = JSON.stringify({ id: 'evt_bare', type: 'payment.completed', data: { object: { amount: '10.00' } } });
  let next = 0;
  const t0 = performance.now();
  const one = async () => {
    while (next++ < n) {
      const r = await fetchLike(url, body, agents.http);
      if (r !== 200) throw new Error(`bare receiver answered ${r}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, one));
  const s = (performance.now() - t0) / 1000;
  agents.destroy();
  return n / s;
}

function fetchLike(url: string, body: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function bareQueue(n: number): Promise<number> {
  const prefix = `${e.WH_PREFIX!}-bare`;
  const conn = redis.duplicate({ maxRetriesPerRequest: null });
  const wconn = redis.duplicate({ maxRetriesPerRequest: null });
  const queue = new Queue('bare', { connection: conn, prefix });
  let done = 0;
  let finish: () => void = () => {};
  const all = new Promise<void>((r) => (finish = r));
  const worker = new Worker('bare', async () => {}, { connection: wconn, prefix, concurrency, removeOnComplete: { count: 0 } });
  worker.on('completed', () => {
    if (++done === n) finish();
  });
  const t0 = performance.now();
  for (let i = 0; i < n; i += 500)
    await queue.addBulk(
      Array.from({ length: Math.min(500, n - i) }, (_, j) => ({
        name: 'x',
        data: { i: i + j },
        opts: { jobId: `b${i + j}`, removeOnComplete: true },
      })),
    );
  await all;
  const s = (performance.now() - t0) / 1000;
  await worker.close();
  await queue.obliterate({ force: true }).catch(() => {});
  await queue.close();
  conn.disconnect();
  wconn.disconnect();
  return n / s;
}

type Msg = { cmd: 'stop' } | { cmd: 'baseline'; url: string; n: number } | { cmd: 'queries' };
let service: { relay: ReturnType<typeof startOutboxRelay>; worker: ReturnType<typeof startDeliveryWorker> } | undefined;
const start = () =>
  (service = {
    relay: startOutboxRelay({ db, redis, prefix: e.WH_PREFIX!, databaseUrl: e.WH_DATABASE_URL!, batchSize: 500, pollIntervalMs: 100 }),
    worker: startDeliveryWorker({
      db,
      redis,
      box: new SecretBox(e.WH_MASTER_KEY!),
      prefix: e.WH_PREFIX!,
      concurrency,
      perMerchantConcurrency: Number(e.WH_PER_MERCHANT ?? 50),
      allowPrivateTargetsInTest: true,
      ...(e.WH_DB_BATCH ? { dbBatchSize: Number(e.WH_DB_BATCH) } : {}),
    }),
  });
process.send?.({ ready: true });
process.on('message', async (m: Msg) => {
  if (m.cmd === 'baseline') {
    const posts = await barePosts(m.url, m.n);
    const jobs = await bareQueue(m.n);
    if (!service) start();
    process.send?.({ posts, jobs });
  } else if (m.cmd === 'queries')
    process.send?.({ queries, redisCommands, cpuMicros: process.cpuUsage().user + process.cpuUsage().system });
  else if (m.cmd === 'stop') {
    await service?.relay.stop();
    await service?.worker.stop();
    redis.disconnect();
    await db.destroy();
    process.exit(0);
  }
});
