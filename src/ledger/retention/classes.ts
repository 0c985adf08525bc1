import { consoleSessions } from './console-sessions.js';
import { idempotencyKeys } from './idempotency-keys.js';
import type { PruneClass } from './prune-class.js';
import { reconcileRuns } from './reconcile-runs.js';
import { webhookEvents } from './webhook-events.js';

// Every class of pruneable data, in the order a run takes them (docs/retention.md lists, table by table, what is never
// pruned: the journal, money rows and both audit logs).
export type RetentionClassName = 'webhook_events' | 'idempotency_keys' | 'reconcile_runs' | 'console_sessions';

export const PRUNE_CLASSES: Readonly<Record<RetentionClassName, PruneClass>> = {
  webhook_events: webhookEvents,
  idempotency_keys: idempotencyKeys,
  reconcile_runs: reconcileRuns,
  console_sessions: consoleSessions,
};

/** Every table a run may delete from (metrics/retention.ts names the same, its closed label vocabulary). */
export const PRUNED_TABLES: readonly string[] = Object.values(PRUNE_CLASSES).flatMap((c) => c.tables);

export type { PruneClass, TableCounts } from './prune-class.js';
