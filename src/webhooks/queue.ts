import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';

// The delivery queue. A job names an event and a delivery generation; everything else (body, URL, secret) is read
// from Postgres when the job runs, so a job duplicated by a crash carries nothing that could diverge.

export const DELIVERY_QUEUE = 'webhook-deliveries';

export interface DeliveryJobData {
  eventId: string;
  generation: number;
}

/** Generation 0 (the relay) uses the event id itself; resends get their own id so a finishing job cannot swallow them. */
export function deliveryJobId(eventId: string, generation: number): string {
  return generation === 0 ? eventId : `${eventId}-r${generation}`;
}

// Finished jobs are removed: Postgres holds the outcome, and a retained job would make a later add of the same id
// a silent no-op.
export const DELIVERY_JOB_OPTIONS: JobsOptions = { attempts: 1, removeOnComplete: true, removeOnFail: true };

export function deliveryJob(data: DeliveryJobData): { name: string; data: DeliveryJobData; opts: JobsOptions } {
  return { name: 'deliver', data, opts: { ...DELIVERY_JOB_OPTIONS, jobId: deliveryJobId(data.eventId, data.generation) } };
}

export interface DeliveryQueue {
  queue: Queue<DeliveryJobData>;
  close(): Promise<void>;
}

/** A producer on its own connection (BullMQ wants maxRetriesPerRequest null); close() releases both. */
export function createDeliveryQueue(redis: Redis, prefix: string): DeliveryQueue {
  const connection = redis.duplicate({ maxRetriesPerRequest: null });
  const queue = new Queue<DeliveryJobData>(DELIVERY_QUEUE, { connection, prefix });
  return {
    queue,
    async close() {
      await queue.close();
      connection.disconnect();
    },
  };
}
