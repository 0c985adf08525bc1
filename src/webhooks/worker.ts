import { DelayedError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Db } from '../db/database.js';
import type { SecretBox } from '../security/secret-box.js';
import { createBatcher } from './batcher.js';
import {
  ensureDeliveryRow,
  loadDeliveryJobs,
  recordAttempt,
  recordAttempts,
  type AttemptRecord,
  type DeliveryJobState,
  type DeliveryTarget,
} from './deliveries.js';
import { createPostAgents, postWebhook } from './http-post.js';
import { errorText, silentLogger, type WebhookLogger } from './logger.js';
import { idField } from '../log-fields.js';
import { createMerchantLimiter } from './merchant-limiter.js';
import { DELIVERY_QUEUE, type DeliveryJobData } from './queue.js';
import { recordWebhookAttempt } from '../metrics/webhooks.js';
import { startDeliveryReconciler } from './reconciler.js';
import { retryDelayMs, verdictOf, type AttemptResult } from './retry-policy.js';
import type { AttemptOutcome, WebhookDb } from './schema.js';
import { buildDeliveryHeaders } from './signing.js';
import { signingSecrets } from './signing-secrets.js';
import { checkWebhookTarget, redactUrl, type Resolver, type TargetMode } from './url-policy.js';

// The delivery worker. One job = one attempt; a retry moves the same job to the delayed set (BullMQ's own retry
// counter is not used: the attempt count lives in Postgres, so a crash or a stalled job cannot skew it). Retries
// follow the configured schedule exactly; jitter only ever adds a little.

export interface DeliveryWorkerOptions {
  db: Db | WebhookDb;
  redis: Redis;
  box: SecretBox;
  /** BullMQ key prefix (the service's REDIS_KEY_PREFIX); also prefixes the per-merchant lease keys. */
  prefix: string;
  logger?: WebhookLogger;
  retrySchedule?: number[];
  jitterRatio?: number;
  timeoutMs?: number;
  concurrency?: number;
  perMerchantConcurrency?: number;
  /** How long a job waits when its merchant is at its concurrency limit (randomised ±50 %). */
  merchantDeferMs?: number;
  /** Test-mode events may reach private, loopback and link-local addresses. Live mode never may. */
  allowPrivateTargetsInTest?: boolean;
  /** DNS resolution for the endpoint rules (tests inject one). */
  resolve?: Resolver;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  reconcileIntervalMs?: number;
  reconcileGraceMs?: number;
  /** Most deliveries loaded, or attempts recorded, in one database round trip (group commit). */
  dbBatchSize?: number;
}

export interface DeliveryWorker {
  stop(): Promise<void>;
}

export function startDeliveryWorker(o: DeliveryWorkerOptions): DeliveryWorker {
  const db = o.db;
  const logger = o.logger ?? silentLogger;
  const schedule = o.retrySchedule ?? [1000, 2000, 4000, 8000, 16000];
  const jitter = o.jitterRatio ?? 0.1;
  const timeoutMs = o.timeoutMs ?? 30_000;
  const concurrency = o.concurrency ?? 50;
  const deferMs = o.merchantDeferMs ?? 250;
  const policy = { allowPrivateTargetsInTest: o.allowPrivateTargetsInTest ?? true, ...(o.resolve ? { resolve: o.resolve } : {}) };
  const agents = createPostAgents(concurrency);
  const limiterClient = o.redis.duplicate();
  // A lease covers one attempt (its timeout plus a margin); the process reuses a lease it holds for its next delivery
  // of the same merchant instead of a Redis round trip to give it back and another to take it again. An idle lease
  // goes back after the merchant defer: a job another process deferred for want of a slot waits about that long anyway.
  const limiter = createMerchantLimiter(limiterClient, o.prefix, o.perMerchantConcurrency ?? 10, {
    leaseMs: timeoutMs + 10_000,
    idleMs: deferMs,
  });
  // Jobs that start or finish together share one round trip: one select for their targets, one statement (and one
  // commit) for their attempt records. A job is acknowledged only after its own record is committed.
  const maxBatch = o.dbBatchSize ?? 100;
  const loader = createBatcher<string, DeliveryJobState | undefined>({
    execute: (ids) => loadDeliveryJobs(db, ids),
    key: (id) => id,
    maxBatch,
  });
  const writer = createBatcher<AttemptRecord, { applied: boolean; attempt: number | null }>({
    execute: (rs) =>
      recordAttempts(db, rs).catch(async (err) => {
        // A batch that fails as a whole (a deadlock with another worker, say) is retried one record at a time, so
        // one bad record cannot fail the others; a database that is down fails each of them as before.
        logger.warn({ err: errorText(err), records: rs.length }, 'webhook worker: batched attempt write failed; writing singly');
        return Promise.all(rs.map((r) => recordAttempt(db, r)));
      }),
    key: (r) => r.eventId,
    maxBatch,
  });

  const attempt = async (t: DeliveryTarget): Promise<AttemptResult> => {
    const check = await checkWebhookTarget(t.webhook_url!, t.mode as TargetMode, policy);
    if (!check.ok) return { kind: 'refused', reason: check.reason };
    const headers = buildDeliveryHeaders({
      secrets: signingSecrets(o.box, t),
      eventId: t.event_id,
      eventType: t.event_type,
      rawBody: t.body,
    });
    return postWebhook({ url: check.url, addresses: check.addresses, headers: { ...headers }, body: t.body, timeoutMs, agents });
  };

  const processJob = async (job: Job<DeliveryJobData>, token?: string): Promise<void> => {
    const { eventId, generation } = job.data;
    let t = await loader.run(eventId);
    if (!t) {
      await ensureDeliveryRow(db, eventId);
      t = await loader.run(eventId);
    }
    if (!t) {
      logger.warn({ event_id: eventId }, 'webhook: job for an unknown event dropped');
      return;
    }
    // A duplicate job (relay re-run, stalled job) or a superseded generation: the delivery is already decided.
    if (t.generation !== generation || t.status !== 'pending') return;
    if (t.waiting) {
      // An earlier event about the same object is still on its way (or retrying): this one waits its turn.
      await job.moveToDelayed(Date.now() + Math.round(deferMs * (0.5 + Math.random())), token);
      throw new DelayedError();
    }
    if (!t.webhook_url) {
      await writer.run(base(t, null, { outcome: 'skipped', attempted: false, error: 'no_webhook_url' }));
      recordWebhookAttempt(t.event_type, 'skipped', null);
      return;
    }
    const lease = await limiter.acquire(t.merchant_id);
    if (!lease) {
      // The merchant already has its share of deliveries in flight: give this worker slot to someone else.
      await job.moveToDelayed(Date.now() + Math.round(deferMs * (0.5 + Math.random())), token);
      throw new DelayedError();
    }
    let result: AttemptResult;
    try {
      result = await attempt(t);
    } finally {
      // No round trip: the lease stays with this process for its next delivery of the merchant, or goes back to
      // Redis shortly (not awaited; a lost give-back expires with the lease).
      limiter.release(t.merchant_id, lease);
    }
    const verdict = verdictOf(result);
    const delay = verdict === 'retryable' ? retryDelayMs(schedule, t.round_attempts + 1, jitter) : undefined;
    const outcome: AttemptOutcome = verdict === 'success' ? 'delivered' : delay !== undefined ? 'retrying' : 'failed';
    const nextAttemptAt = delay !== undefined ? new Date(Date.now() + delay) : undefined;
    const rec = await writer.run({
      ...base(t, redactUrl(t.webhook_url), { outcome, attempted: result.kind !== 'refused', error: errorOf(result) }),
      statusCode: result.kind === 'response' ? result.statusCode : null,
      latencyMs: result.kind === 'refused' ? null : result.latencyMs,
      excerpt: result.kind === 'response' ? result.excerpt : null,
      ...(nextAttemptAt ? { nextAttemptAt } : {}),
    });
    if (rec.applied) recordWebhookAttempt(t.event_type, outcome, result.kind === 'refused' ? null : result.latencyMs);
    const logFields = {
      event_id: eventId,
      event_type: t.event_type,
      ...(t.aggregate_id ? idField(t.aggregate_id) : {}),
      mode: t.mode,
      merchantId: t.merchant_id,
      attempt: rec.attempt,
      outcome,
      status: result.kind === 'response' ? result.statusCode : undefined,
      error: errorOf(result) ?? undefined,
    };
    if (outcome === 'failed') logger.warn(logFields, 'webhook: delivery failed');
    else if (outcome === 'retrying') logger.info(logFields, 'webhook: attempt failed; retry scheduled');
    else logger.info(logFields, 'webhook: delivered');
    if (outcome === 'retrying' && rec.applied) {
      await job.moveToDelayed(nextAttemptAt!.getTime(), token);
      throw new DelayedError();
    }
  };

  const workerConnection = o.redis.duplicate({ maxRetriesPerRequest: null });
  const worker = new Worker<DeliveryJobData>(DELIVERY_QUEUE, processJob, {
    connection: workerConnection,
    prefix: o.prefix,
    concurrency,
    lockDuration: o.lockDurationMs ?? 60_000,
    stalledInterval: o.stalledIntervalMs ?? 30_000,
    // A job whose worker died goes back to waiting; past this count BullMQ fails it and the reconciler re-adds it.
    maxStalledCount: 5,
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 0 },
  });
  worker.on('error', (err) => logger.error({ err: errorText(err) }, 'webhook worker: error'));
  worker.on('failed', (job, err) => {
    if (!(err instanceof DelayedError)) logger.error({ event_id: job?.data.eventId, err: errorText(err) }, 'webhook worker: job error');
  });

  const reconciler = startDeliveryReconciler({
    db,
    redis: o.redis,
    prefix: o.prefix,
    logger,
    intervalMs: o.reconcileIntervalMs ?? 30_000,
    graceMs: o.reconcileGraceMs ?? 120_000,
  });

  return {
    async stop() {
      await reconciler.stop();
      await worker.close();
      await limiter.close();
      workerConnection.disconnect();
      limiterClient.disconnect();
      agents.destroy();
    },
  };
}

function base(t: DeliveryTarget, url: string | null, x: { outcome: AttemptOutcome; attempted: boolean; error: string | null }) {
  return {
    eventId: t.event_id,
    merchantId: t.merchant_id,
    generation: t.generation,
    url,
    statusCode: null,
    latencyMs: null,
    excerpt: null,
    ...x,
  };
}

function errorOf(r: AttemptResult): string | null {
  switch (r.kind) {
    case 'response':
      return r.statusCode >= 200 && r.statusCode < 300 ? null : `http_${r.statusCode}`;
    case 'timeout':
      return 'timeout';
    case 'network':
      return `network: ${r.error}`;
    case 'refused':
      return `url_refused: ${r.reason}`;
  }
}
