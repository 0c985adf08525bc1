import type { Db } from '../db/database.js';
import type { Logger } from '../logger.js';
import { PRUNE_CLASSES, type RetentionClassName, type TableCounts } from '../ledger/retention/classes.js';
import { createQueue, createWorker, type QueueContext } from './queues.js';
import type { RetentionSettings } from './retention-settings.js';

// Pruning of what grows without bound (docs/retention.md). A run takes each class in turn: everything older than its
// retention period goes in batches of `batchRows` rows, each one short statement (ledger/retention/), until a batch
// comes back short or the run's batch budget per class is spent (the rest goes next run: a deployment that turns
// retention on after a year catches up over a few runs instead of holding a worker for an hour). The worker role runs
// it on one BullMQ schedule for the whole deployment; `retention run` (the CLI) runs it at once. Two runs at the same
// time share the rows between them (SKIP LOCKED): none is deleted or counted twice.

/** Batches per class and run: 200 × 5,000 rows = a million rows of each table per run at most. */
export const MAX_BATCHES_PER_RUN = 200;

export interface RetentionClassReport {
  class: RetentionClassName;
  /** The retention period in hours, or null: kept forever (the class is skipped). */
  retention_hours: number | null;
  /** Rows created (or settled) before this instant go; null when kept forever. */
  cutoff: string | null;
  /** Rows deleted per table (in a dry run: rows that would be). */
  rows: TableCounts;
  batches: number;
  /** False when the batch budget ran out with rows left (the next run continues). */
  complete: boolean;
}

export interface RetentionReport {
  dry_run: boolean;
  started_at: string;
  finished_at: string;
  classes: RetentionClassReport[];
  /** Rows per table over every class. */
  totals: TableCounts;
}

const periodOf = (s: RetentionSettings, c: RetentionClassName): number | null =>
  ({
    webhook_events: s.webhookEventsMs,
    idempotency_keys: s.idempotencyMs,
    reconcile_runs: s.reconcileRunsMs,
    console_sessions: s.consoleSessionsMs,
  })[c];

const add = (into: TableCounts, from: TableCounts) => {
  for (const [t, n] of Object.entries(from)) into[t] = (into[t] ?? 0) + n;
};

export async function runRetention(
  db: Db,
  settings: RetentionSettings,
  opts: { dryRun?: boolean; now?: Date; log?: Pick<Logger, 'info'>; maxBatches?: number } = {},
): Promise<RetentionReport> {
  const started = new Date();
  const now = opts.now ?? started;
  const maxBatches = opts.maxBatches ?? MAX_BATCHES_PER_RUN;
  const classes: RetentionClassReport[] = [];
  const totals: TableCounts = {};
  for (const [name, c] of Object.entries(PRUNE_CLASSES) as Array<[RetentionClassName, (typeof PRUNE_CLASSES)[RetentionClassName]]>) {
    const period = periodOf(settings, name);
    const rows: TableCounts = Object.fromEntries(c.tables.map((t) => [t, 0]));
    if (period === null) {
      classes.push({ class: name, retention_hours: null, cutoff: null, rows, batches: 0, complete: true });
      continue;
    }
    const cutoff = new Date(now.getTime() - period);
    let batches = 0;
    let complete = true;
    if (opts.dryRun) add(rows, await c.count(db, cutoff));
    else
      for (;;) {
        if (batches >= maxBatches) {
          complete = false;
          break;
        }
        const got = await c.pruneBatch(db, cutoff, settings.batchRows);
        batches++;
        add(rows, got);
        if ((got[c.tables[0]!] ?? 0) < settings.batchRows) break;
      }
    add(totals, rows);
    const report = { class: name, retention_hours: period / 3_600_000, cutoff: cutoff.toISOString(), rows, batches, complete };
    classes.push(report);
    if (!opts.dryRun && Object.values(rows).some((n) => n > 0))
      opts.log?.info({ class: name, cutoff: report.cutoff, ...rows, batches, complete }, 'retention: pruned');
  }
  const finished = new Date();
  opts.log?.info(
    { dry_run: opts.dryRun === true, ...totals, ms: finished.getTime() - started.getTime() },
    opts.dryRun ? 'retention: dry run finished' : 'retention run finished',
  );
  return { dry_run: opts.dryRun === true, started_at: started.toISOString(), finished_at: finished.toISOString(), classes, totals };
}

export interface RetentionWorkerOptions {
  db: Db;
  settings: RetentionSettings;
  logger?: Pick<Logger, 'info' | 'warn'>;
  /** After each finished run (the worker role records the metrics here). */
  onRun?: (report: RetentionReport) => void;
}

/** The scheduled run: one BullMQ job scheduler for the whole deployment (every worker upserts the same one). */
export async function startRetentionWorker(ctx: QueueContext, opts: RetentionWorkerOptions): Promise<{ stop(): Promise<void> }> {
  const schedule = createQueue('retention', ctx);
  await schedule.upsertJobScheduler('retention', { every: opts.settings.intervalMs }, { name: 'run', data: {} });
  const worker = createWorker(
    'retention',
    ctx,
    async () => {
      const report = await runRetention(opts.db, opts.settings, { ...(opts.logger ? { log: opts.logger } : {}) });
      opts.onRun?.(report);
    },
    1,
  );
  worker.on('failed', (job, err) => opts.logger?.warn({ err, job: job?.id }, 'retention run failed'));
  return {
    async stop() {
      await Promise.all([worker.close(), schedule.close()]);
    },
  };
}
