import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import { errorText, type WebhookLogger } from './logger.js';
import { createDeliveryQueue, deliveryJob, deliveryJobId, type DeliveryJobData } from './queue.js';
import type { Queue } from 'bullmq';
import type { WebhookDb } from './schema.js';

// Postgres is the record of what is owed; Redis only schedules it. A delivery that is pending and overdue by more
// than the grace period, with no live job, gets its job back: after Redis lost its data (it keeps nothing on disk
// here), after BullMQ gave up on a job that stalled too often, or after any crash between two writes.

export async function reconcileDeliveries(db: WebhookDb, queue: Queue<DeliveryJobData>, graceMs: number, limit = 1000): Promise<number> {
  const { rows } = await sql<{ event_id: string; generation: number }>`
    select event_id, generation from webhook_deliveries
    where status = 'pending' and next_attempt_at < now() - ${graceMs} * interval '1 millisecond'
    order by next_attempt_at limit ${limit}`.execute(db);
  let requeued = 0;
  for (const r of rows) {
    const id = deliveryJobId(r.event_id, r.generation);
    const job = await queue.getJob(id);
    if (job) {
      const state = await job.getState();
      if (state !== 'completed' && state !== 'failed' && state !== 'unknown') continue;
      await job.remove().catch(() => {});
    }
    const j = deliveryJob({ eventId: r.event_id, generation: r.generation });
    await queue.add(j.name, j.data, j.opts);
    requeued++;
  }
  return requeued;
}

export function startDeliveryReconciler(o: {
  db: WebhookDb;
  redis: Redis;
  prefix: string;
  logger: WebhookLogger;
  intervalMs: number;
  graceMs: number;
}): { stop(): Promise<void> } {
  const dq = createDeliveryQueue(o.redis, o.prefix);
  let running: Promise<void> | undefined;
  const tick = () => {
    if (running) return;
    running = reconcileDeliveries(o.db, dq.queue, o.graceMs)
      .then((n) => {
        if (n) o.logger.warn({ requeued: n }, 'webhook reconciler: re-enqueued overdue deliveries');
      })
      .catch((err) => o.logger.error({ err: errorText(err) }, 'webhook reconciler: pass failed'))
      .finally(() => (running = undefined));
  };
  const timer = setInterval(tick, o.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
      await dq.close();
    },
  };
}
