import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { type AuditActor, type AuditEntry, appendAudit } from '../ledger/audit/audit-log.js';

// How the console's operations write their audit row: through the console route's own recorder when called from a
// console route (it adds the signed-in actor and counts the row), else straight to the audit log as `actor` (the CLI).

export type AuditWriter = (entry: AuditEntry) => Promise<void>;

export function auditWith(db: Kysely<Database>, actor: AuditActor, writer?: AuditWriter): AuditWriter {
  return writer ?? ((entry) => appendAudit(db, actor, entry));
}
