import { Queue, Worker, type Job, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';

// Typed job catalog: each queue declares its payload schema and default job options once; producers and
// handlers are typed from it and payloads are validated on both sides.
export const JOBS = {
  'session-expiry': {
    payload: z.strictObject({ sessionId: z.string().min(1) }),
    options: { attempts: 8, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: 1000, removeOnFail: 5000 },
  },
  'maintenance': {
    payload: z.strictObject({ task: z.enum(['expiry-sweep']) }),
    options: { attempts: 1, removeOnComplete: 100, removeOnFail: 100 },
  },
} as const satisfies Record<string, { payload: z.ZodType; options: JobsOptions }>;

export type JobName = keyof typeof JOBS;
export type JobPayload<N extends JobName> = z.infer<(typeof JOBS)[N]['payload']>;

export interface QueueContext {
  /** BullMQ needs its own connections (blocking commands); it duplicates this one. */
  connection: Redis;
  prefix: string;
}

export function createQueue<N extends JobName>(name: N, ctx: QueueContext): Queue<JobPayload<N>> {
  return new Queue<JobPayload<N>>(name, {
    connection: ctx.connection.duplicate(),
    prefix: `${ctx.prefix}:bull`,
    defaultJobOptions: JOBS[name].options,
  });
}

export function createWorker<N extends JobName>(
  name: N,
  ctx: QueueContext,
  handler: (payload: JobPayload<N>, job: Job) => Promise<unknown>,
  concurrency = 4,
): Worker<JobPayload<N>> {
  return new Worker<JobPayload<N>>(
    name,
    async (job) => handler(JOBS[name].payload.parse(job.data) as JobPayload<N>, job),
    { connection: ctx.connection.duplicate({ maxRetriesPerRequest: null }), prefix: `${ctx.prefix}:bull`, concurrency },
  );
}
