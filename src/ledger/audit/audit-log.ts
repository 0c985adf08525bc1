import type { Kysely } from 'kysely';
import type { Selectable } from 'kysely';
import type { AuditActorKind, ConsoleAuditTable } from '../../db/console-tables.js';
import type { Database } from '../../db/schema.js';

// The audit log (migration 2026_11_29_0300_console): one row per mutation made by a person, through the console or
// the CLI. Append-only: the table's trigger refuses every UPDATE, DELETE and TRUNCATE. Secrets never enter it: callers
// pass what an operator may read back (a key's prefix, never its secret).

export interface AuditActor {
  kind: AuditActorKind;
  /** The console user's id (cu_...), or the operating-system user of a CLI command. */
  id: string | null;
  email?: string | null;
  role?: string | null;
  ip?: string | null;
}

export interface AuditEntry {
  action: string;
  objectType: string;
  objectId?: string | null;
  merchantId?: string | null;
  before?: unknown;
  after?: unknown;
  detail?: string | null;
}

/** A row as read back; its id as a string (bigserial). */
export type AuditRow = Omit<Selectable<ConsoleAuditTable>, 'id'> & { id: string };

const json = (v: unknown): string | null =>
  v === undefined ? null : JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));

export async function appendAudit(db: Kysely<Database>, actor: AuditActor, entry: AuditEntry): Promise<void> {
  await db
    .insertInto('console_audit')
    .values({
      actor_kind: actor.kind,
      actor_id: actor.id,
      actor_email: actor.email ?? null,
      actor_role: actor.role ?? null,
      action: entry.action,
      object_type: entry.objectType,
      object_id: entry.objectId ?? null,
      merchant_id: entry.merchantId ?? null,
      before: json(entry.before),
      after: json(entry.after),
      ip: actor.ip ?? null,
      detail: entry.detail ?? null,
    })
    .execute();
}

export interface AuditFilter {
  merchantId?: string;
  actorId?: string;
  action?: string;
  objectType?: string;
  objectId?: string;
  from?: Date;
  to?: Date;
  /** Rows with an id below this one (keyset pagination, newest first). */
  beforeId?: bigint;
  limit: number;
}

/** Newest first, keyset by id; uses console_audit's indexes on (at, id), (merchant_id, ...), (actor_id, ...). */
export async function listAudit(db: Kysely<Database>, f: AuditFilter): Promise<AuditRow[]> {
  let q = db.selectFrom('console_audit').selectAll();
  if (f.merchantId !== undefined) q = q.where('merchant_id', '=', f.merchantId);
  if (f.actorId !== undefined) q = q.where('actor_id', '=', f.actorId);
  if (f.action !== undefined) q = q.where('action', '=', f.action);
  if (f.objectType !== undefined) q = q.where('object_type', '=', f.objectType);
  if (f.objectId !== undefined) q = q.where('object_id', '=', f.objectId);
  if (f.from !== undefined) q = q.where('at', '>=', f.from);
  if (f.to !== undefined) q = q.where('at', '<', f.to);
  if (f.beforeId !== undefined) q = q.where('id', '<', f.beforeId);
  const rows = await q.orderBy('id', 'desc').limit(f.limit).execute();
  return rows.map((r) => ({ ...r, id: String(r.id) }));
}
