import type { Logger } from '../logger.js';
import type { Db } from '../db/database.js';
import { expireSession, overdueSessionIds, type ExpiryDeps, type SessionRow } from '../ledger/payments/sessions.js';
import { createQueue, createWorker, type QueueContext } from './queues.js';

// Expiry at expires_at: one delayed BullMQ job per session, plus a periodic sweep that expires anything overdue
// (a job lost with Redis, a crash between commit and enqueue, an expiry deferred while money may still arrive).
// expireSession is idempotent, so the job and the sweep may both run.

export interface ExpiryScheduler {
  schedule(session: SessionRow): Promise<void>;
  close(): Promise<void>;
}

export function createExpiryScheduler(ctx: QueueContext): ExpiryScheduler {
  const queue = createQueue('session-expiry', ctx);
  return {
    async schedule(s) {
      await queue.add('expire', { sessionId: s.id }, { jobId: `expire-${s.id}`, delay: Math.max(0, s.expires_at.getTime() - Date.now()) });
    },
    close: () => queue.close(),
  };
}

export interface ExpiryWorkerOptions extends ExpiryDeps {
  db: Db;
  sweepIntervalMs: number;
  logger?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

export async function startExpiryWorker(ctx: QueueContext, opts: ExpiryWorkerOptions): Promise<{ stop(): Promise<void> }> {
  const expiry = createWorker('session-expiry', ctx, async ({ sessionId }) => expireSession(opts.db, sessionId, opts));
  const maintenance = createQueue('expiry-sweep', ctx);
  // One schedule for the whole deployment: every process upserts the same scheduler id.
  await maintenance.upsertJobScheduler('expiry-sweep', { every: opts.sweepIntervalMs }, { name: 'sweep', data: {} });
  const sweeper = createWorker('expiry-sweep', ctx, async () => sweepOverdue(opts.db, opts), 1);
  for (const w of [expiry, sweeper]) w.on('failed', (job, err) => opts.logger?.warn({ err, job: job?.id }, 'job failed'));
  return {
    async stop() {
      await Promise.all([expiry.close(), sweeper.close(), maintenance.close()]);
    },
  };
}

/** Expires overdue open sessions in batches; returns how many it expired. */
export async function sweepOverdue(db: Db, deps: ExpiryDeps, batch = 500): Promise<number> {
  let expired = 0;
  for (const id of await overdueSessionIds(db, batch)) {
    if ((await expireSession(db, id, deps)) === 'expired') expired++;
  }
  return expired;
}
