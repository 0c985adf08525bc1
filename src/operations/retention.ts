import type { Db } from '../db/database.js';
import { appendAudit, type AuditActor } from '../ledger/audit/audit-log.js';
import { runRetention, type RetentionReport } from '../jobs/retention.js';
import type { RetentionSettings } from '../jobs/retention-settings.js';
import type { Logger } from '../logger.js';

// `retention run [--dry-run]` (docs/retention.md): the scheduled pruning, now. A dry run only counts what would go.
// A real run by a person is an audit row (what went, per table); the scheduled runs are the system's and log instead.

export async function runRetentionNow(
  ctx: { db: Db; log?: Pick<Logger, 'info'> },
  actor: AuditActor,
  settings: RetentionSettings,
  opts: { dryRun: boolean },
): Promise<RetentionReport> {
  const report = await runRetention(ctx.db, settings, { dryRun: opts.dryRun, ...(ctx.log ? { log: ctx.log } : {}) });
  if (!opts.dryRun)
    await appendAudit(ctx.db, actor, {
      action: 'retention.run',
      objectType: 'retention',
      after: report.totals,
      detail: report.classes.every((c) => c.complete) ? null : 'batch budget spent: the next run continues',
    });
  return report;
}
