import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { ConsoleRole, ConsoleUsersTable } from '../../db/console-tables.js';
import { newId } from '../../domain/ids.js';

// Console users (migration 2026_11_29_0300_console): email unique case-insensitively, an argon2id password hash (never
// the password), the TOTP secret sealed under the master key (pending while totp_enabled_at is null), disabled users
// kept for the audit log's sake. Hashing and sealing are the callers' (console/auth, operations/console-users).

export type ConsoleUserRecord = Selectable<ConsoleUsersTable>;

export async function insertConsoleUser(
  db: Db,
  u: { email: string; role: ConsoleRole; merchantId: string | null; passwordHash: string; mustChangePassword: boolean },
): Promise<ConsoleUserRecord> {
  return db
    .insertInto('console_users')
    .values({
      id: newId('cu'),
      email: u.email,
      role: u.role,
      merchant_id: u.merchantId,
      password_hash: u.passwordHash,
      must_change_password: u.mustChangePassword,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function getConsoleUser(db: Db, id: string): Promise<ConsoleUserRecord | undefined> {
  return db.selectFrom('console_users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** By email, case-insensitively (the unique index is on lower(email)). */
export async function getConsoleUserByEmail(db: Db, email: string): Promise<ConsoleUserRecord | undefined> {
  return db.selectFrom('console_users').selectAll().where(sql<string>`lower(email)`, '=', email.toLowerCase()).executeTakeFirst();
}

export interface ConsoleUserFilter {
  role?: ConsoleRole;
  merchantId?: string;
  /** The id of the last row of the previous page (newest first by created_at, id). */
  after?: string;
  limit: number;
}

/** Newest first, keyset by (created_at, id) (index console_users_created). */
export async function listConsoleUsers(db: Db, f: ConsoleUserFilter): Promise<ConsoleUserRecord[]> {
  let q = db.selectFrom('console_users').selectAll();
  if (f.role !== undefined) q = q.where('role', '=', f.role);
  if (f.merchantId !== undefined) q = q.where('merchant_id', '=', f.merchantId);
  if (f.after !== undefined) {
    q = q.where(sql<boolean>`(created_at, id) < (select c.created_at, c.id from console_users c where c.id = ${f.after})`);
  }
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(f.limit).execute();
}

/** Disables the user (first time only: the first disabled_at stays); undefined when there is no such user. */
export async function disableConsoleUser(db: Db, id: string): Promise<ConsoleUserRecord | undefined> {
  await db
    .updateTable('console_users')
    .set({ disabled_at: sql`now()`, updated_at: sql`now()` })
    .where('id', '=', id)
    .where('disabled_at', 'is', null)
    .execute();
  return getConsoleUser(db, id);
}

export async function setConsolePassword(db: Db, id: string, passwordHash: string, mustChange: boolean): Promise<void> {
  await db
    .updateTable('console_users')
    .set({ password_hash: passwordHash, must_change_password: mustChange, updated_at: sql`now()` })
    .where('id', '=', id)
    .execute();
}

/** Stores a pending TOTP secret (sealed); it counts only once confirmed (enableTotp). Refused once TOTP is enabled. */
export async function setPendingTotp(db: Db, id: string, sealedSecret: string): Promise<boolean> {
  const r = await db
    .updateTable('console_users')
    .set({ totp_secret_enc: sealedSecret, updated_at: sql`now()` })
    .where('id', '=', id)
    .where('totp_enabled_at', 'is', null)
    .executeTakeFirst();
  return r.numUpdatedRows === 1n;
}

/** Confirms the pending secret; false when there was none or TOTP was already enabled. */
export async function enableTotp(db: Db, id: string): Promise<boolean> {
  const r = await db
    .updateTable('console_users')
    .set({ totp_enabled_at: sql`now()`, updated_at: sql`now()` })
    .where('id', '=', id)
    .where('totp_enabled_at', 'is', null)
    .where('totp_secret_enc', 'is not', null)
    .executeTakeFirst();
  return r.numUpdatedRows === 1n;
}

export async function clearTotp(db: Db, id: string): Promise<void> {
  await db
    .updateTable('console_users')
    .set({ totp_secret_enc: null, totp_enabled_at: null, updated_at: sql`now()` })
    .where('id', '=', id)
    .execute();
}
