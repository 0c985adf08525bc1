import { userInfo } from 'node:os';
import type { Db } from '../db/database.js';
import type { RetentionSettings } from '../jobs/retention-settings.js';
import type { AuditActor } from '../ledger/audit/audit-log.js';
import { runRetentionNow } from '../operations/retention.js';
import { UsageError, options, print } from './args.js';

// `retention run [--dry-run]`: prunes now what the RETENTION_* settings let go (docs/retention.md), or with --dry-run
// prints per table what would go and changes nothing. Output: the run's report as JSON.

export const RETENTION_USAGE = `retention run [--dry-run]                           prune what is past its retention (docs/retention.md);
                                                    --dry-run prints per table what would go, changing nothing`;

function cliActor(): AuditActor {
  let name = 'unknown';
  try {
    name = userInfo().username;
  } catch {
    name = process.env.USER ?? 'unknown';
  }
  return { kind: 'cli', id: name };
}

export async function retentionCli(args: string[], ctx: { db: Db; settings: RetentionSettings }): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'run') throw new UsageError(`usage:\n${RETENTION_USAGE}`);
  const { values, positionals } = options(rest, { 'dry-run': { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}\n${RETENTION_USAGE}`);
  print(await runRetentionNow({ db: ctx.db }, cliActor(), ctx.settings, { dryRun: values['dry-run'] === true }));
}
