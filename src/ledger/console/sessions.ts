import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { ConsoleSessionsTable } from '../../db/console-tables.js';

// Console sign-in sessions: keyed by sha256 of the cookie (the cookie itself is never stored), with the session's CSRF
// token, an absolute expiry, last_seen_at for the idle timeout, and revoked_at (sign-out, sign out everywhere, a
// disabled or reset user, a password change).

export type ConsoleSessionRecord = Selectable<ConsoleSessionsTable>;

export async function insertConsoleSession(
  db: Db,
  s: {
    idHash: string;
    userId: string;
    csrfToken: string;
    secondFactorDone: boolean;
    ip: string;
    userAgent: string | null;
    expiresAt: Date;
  },
): Promise<void> {
  await db
    .insertInto('console_sessions')
    .values({
      id_hash: s.idHash,
      user_id: s.userId,
      csrf_token: s.csrfToken,
      second_factor_done: s.secondFactorDone,
      ip: s.ip,
      user_agent: s.userAgent,
      expires_at: s.expiresAt,
    })
    .execute();
}

export async function getConsoleSession(db: Db, idHash: string): Promise<ConsoleSessionRecord | undefined> {
  return db.selectFrom('console_sessions').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
}

export async function touchConsoleSession(db: Db, idHash: string): Promise<void> {
  await db.updateTable('console_sessions').set({ last_seen_at: sql`now()` }).where('id_hash', '=', idHash).execute();
}

export async function revokeConsoleSession(db: Db, idHash: string): Promise<void> {
  await db
    .updateTable('console_sessions')
    .set({ revoked_at: sql`now()` })
    .where('id_hash', '=', idHash)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Revokes every live session of the user except `keep` (its current one, when given); returns how many. */
export async function revokeUserSessions(db: Db, userId: string, keep?: string): Promise<number> {
  let q = db.updateTable('console_sessions').set({ revoked_at: sql`now()` }).where('user_id', '=', userId).where('revoked_at', 'is', null);
  if (keep !== undefined) q = q.where('id_hash', '<>', keep);
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** The second factor of a signed-in session is done (TOTP confirmed by an operator who had none). */
export async function markSecondFactorDone(db: Db, idHash: string): Promise<void> {
  await db.updateTable('console_sessions').set({ second_factor_done: true }).where('id_hash', '=', idHash).execute();
}
