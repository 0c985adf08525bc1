import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { JOBS } from '../jobs/queues.js';
import { DELIVERY_QUEUE } from '../webhooks/queue.js';
import { metrics } from '../metrics/registry.js';

// BullMQ queue depths by queue and job state, read at scrape time (a few Redis commands per queue).

const STATES = ['waiting', 'active', 'delayed', 'failed', 'prioritized', 'waiting-children'] as const;
const depth = metrics.gauge<'queue' | 'state'>({
  name: 'stablepay_queue_jobs',
  help: 'BullMQ jobs by queue and state.',
  labels: ['queue', 'state'],
  values: { queue: [...Object.keys(JOBS), DELIVERY_QUEUE], state: STATES },
});

/** Registers the collector; the returned function unregisters it and closes its queue handles and connection. */
export function registerQueueCollector(redis: Redis, prefix: string): () => Promise<void> {
  // One connection shared by every handle: BullMQ never closes a connection it was given, so it is closed here.
  const connection = redis.duplicate();
  const queues = [
    ...Object.keys(JOBS).map((name) => new Queue(name, { connection, prefix: `${prefix}:bull` })),
    new Queue(DELIVERY_QUEUE, { connection, prefix }),
  ];
  const off = metrics.onScrape('queues', async () => {
    await Promise.all(
      queues.map(async (q) => {
        const counts = await q.getJobCounts(...STATES);
        for (const state of STATES) depth.set({ queue: q.name, state }, counts[state] ?? 0);
      }),
    );
  });
  return async () => {
    off();
    await Promise.allSettled(queues.map((q) => q.close()));
    connection.disconnect();
  };
}
