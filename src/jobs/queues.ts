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
  payouts: {
    payload: z.strictObject({ refundId: z.string().min(1) }),
    // Attempts guard against a crashing handler; the engine itself never throws for chain outcomes.
    options: { attempts: 20, backoff: { type: 'exponential', delay: 2000 }, removeOnComplete: 1000, removeOnFail: 5000 },
  },
  'deposit-setup': {
    payload: z.strictObject({ sessionId: z.string().min(1) }),
    options: { attempts: 5, backoff: { type: 'exponential', delay: 2000 }, removeOnComplete: 1000, removeOnFail: 5000 },
  },
  // Periodic sweeps, one queue each so that each worker only ever takes its own task.
  'expiry-sweep': {
    payload: z.strictObject({}),
    options: { attempts: 1, removeOnComplete: 100, removeOnFail: 100 },
  },
  'payout-sweep': {
    payload: z.strictObject({}),
    options: { attempts: 1, removeOnComplete: 100, removeOnFail: 100 },
  },
  // Pruning of what grows without bound (src/jobs/retention.ts, docs/retention.md).
  retention: {
    payload: z.strictObject({}),
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
  const connection = ctx.connection.duplicate();
  const queue = new Queue<JobPayload<N>>(name, {
    connection,
    prefix: `${ctx.prefix}:bull`,
    defaultJobOptions: JOBS[name].options,
  });
  return closingConnection(queue, connection);
}

/**
 * BullMQ treats a connection it is given as shared and never closes it: the duplicate made for a queue or worker is
 * owned here and disconnected when that queue or worker closes (else a short-lived process, a CLI command, never exits).
 */
function closingConnection<T extends { close(...args: never[]): Promise<void> }>(owner: T, connection: Redis): T {
  const close = owner.close.bind(owner) as (...args: Parameters<T['close']>) => Promise<void>;
  owner.close = (async (...args: Parameters<T['close']>) => {
    try {
      await close(...args);
    } finally {
      connection.disconnect();
    }
  }) as T['close'];
  return owner;
}

export function createWorker<N extends JobName>(
  name: N,
  ctx: QueueContext,
  handler: (payload: JobPayload<N>, job: Job, token: string | undefined) => Promise<unknown>,
  concurrency = 4,
  /** How long a job stays locked to a worker that stopped renewing it (a crashed process) before it runs again. */
  lockDurationMs = 30_000,
): Worker<JobPayload<N>> {
  const connection = ctx.connection.duplicate({ maxRetriesPerRequest: null });
  const worker = new Worker<JobPayload<N>>(
    name,
    async (job, token) => handler(JOBS[name].payload.parse(job.data) as JobPayload<N>, job, token),
    {
      connection,
      prefix: `${ctx.prefix}:bull`,
      concurrency,
      lockDuration: lockDurationMs,
      stalledInterval: Math.min(30_000, lockDurationMs),
      // Every job here is crash-safe and idempotent (an outbound step resumes from its persisted attempt), so a job
      // whose worker died is always taken back, however often that happened. BullMQ's default (1) failed a refund's job
      // for good after its second crash, leaving the refund `processing` with nothing to resume it (the fault simulator,
      // seed 1: a kill, then a crash at outbound:after_sign). A job that kills every worker it reaches stays active, and
      // its object stays in progress, which the PayoutsStuck and OutboxStuck alerts report.
      maxStalledCount: Number.MAX_SAFE_INTEGER,
    },
  );
  return closingConnection(worker, connection);
}
