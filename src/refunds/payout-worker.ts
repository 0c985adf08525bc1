import { DelayedError } from 'bullmq';
import type { Db } from '../db/database.js';
import { createQueue, createWorker, type QueueContext } from '../jobs/queues.js';
import { openRefundIds } from '../ledger/refunds/refund-payouts.js';
import type { Logger } from '../logger.js';
import { withIds } from '../log-fields.js';
import { advanceRefund, type PayoutEngineDeps } from './payout-engine.js';

// Refund payouts as BullMQ jobs, one job per refund (job id payout-<re_id>). A job drives its refund step by step
// for a while, then parks itself in the delayed set; a periodic sweep re-adds a job for any open refund whose job
// was lost (Redis flushed, a crash between commit and enqueue). Each step is safe to repeat: see engine.ts.

export interface PayoutScheduler {
  enqueue(refundId: string): Promise<void>;
  close(): Promise<void>;
}

export function createPayoutScheduler(ctx: QueueContext): PayoutScheduler {
  const queue = createQueue('payouts', ctx);
  return {
    async enqueue(refundId) {
      await queue.add('payout', { refundId }, { jobId: `payout-${refundId}` });
    },
    close: () => queue.close(),
  };
}

export interface PayoutWorkerOptions extends PayoutEngineDeps {
  concurrency: number;
  /** How long one job keeps driving its refund before parking itself. */
  jobBudgetMs: number;
  sweepIntervalMs: number;
  /** A crashed worker's job runs again after this long (BullMQ lock and stalled-job check). */
  lockDurationMs: number;
  log?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

export async function startPayoutWorker(ctx: QueueContext, opts: PayoutWorkerOptions): Promise<{ stop(): Promise<void> }> {
  let stopping = false;
  const worker = createWorker(
    'payouts',
    ctx,
    async ({ refundId }, job, token) => {
      const until = Date.now() + opts.jobBudgetMs;
      const stepOpts = opts.log ? { ...opts, log: withIds(opts.log, { refund_id: refundId }) } : opts;
      for (;;) {
        const step = await advanceRefund(stepOpts, refundId);
        if (step.kind === 'done') return step.status;
        if (stopping || Date.now() + step.ms > until) {
          await job.moveToDelayed(Date.now() + step.ms, token);
          throw new DelayedError();
        }
        await new Promise((r) => setTimeout(r, step.ms));
      }
    },
    opts.concurrency,
    opts.lockDurationMs,
  );
  worker.on('failed', (job, err) => opts.log?.warn({ err, job: job?.id }, 'payout job failed; BullMQ retries it'));

  const scheduler = createPayoutScheduler(ctx);
  const maintenance = createQueue('payout-sweep', ctx);
  await maintenance.upsertJobScheduler('payout-sweep', { every: opts.sweepIntervalMs }, { name: 'sweep', data: {} });
  const sweeper = createWorker(
    'payout-sweep',
    ctx,
    async () => {
      for (const id of await openRefundIds(opts.db as Db, opts.sweepIntervalMs, 1000)) await scheduler.enqueue(id);
    },
    1,
  );

  return {
    async stop() {
      stopping = true;
      await Promise.all([worker.close(), sweeper.close(), maintenance.close(), scheduler.close()]);
    },
  };
}
