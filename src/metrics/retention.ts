import { metrics } from './registry.js';

// Set by each scheduled retention run (src/jobs/retention.ts, docs/retention.md): rows deleted per table, and when the
// last run finished (an alert can watch that it keeps running). The tables are those of ledger/retention/classes.ts
// (PRUNED_TABLES; test/integration/retention.test.ts compares them).
export const RETENTION_TABLES = [
  'webhook_deliveries',
  'webhook_delivery_attempts',
  'outbox_events',
  'idempotency_keys',
  'reconcile_runs',
  'reconcile_differences',
  'console_sessions',
] as const;

export const retentionPrunedRows = metrics.counter<'table'>({
  name: 'stablepay_retention_pruned_rows_total',
  help: 'Rows deleted by the retention job, per table (docs/retention.md).',
  labels: ['table'],
  values: { table: RETENTION_TABLES },
});

export const retentionLastRun = metrics.gauge<never>({
  name: 'stablepay_retention_last_run_timestamp_seconds',
  help: 'Unix time of the last finished retention run of this process.',
  labels: [],
});

/** Records one finished run: rows deleted per table, and its end. */
export function recordRetentionRun(rowsByTable: Readonly<Record<string, number>>, finishedAt: Date): void {
  for (const [table, n] of Object.entries(rowsByTable)) if (n > 0) retentionPrunedRows.inc({ table }, n);
  retentionLastRun.set({}, finishedAt.getTime() / 1000);
}
