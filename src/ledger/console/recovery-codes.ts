import { sql } from 'kysely';
import type { Db } from '../../db/database.js';

// One-time recovery codes of a console user with TOTP: ten, stored as hashes (sha256 of a high-entropy code), each
// usable once. Storing a new set replaces the old one.

export async function replaceRecoveryCodes(db: Db, userId: string, codeHashes: readonly string[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('console_recovery_codes').where('user_id', '=', userId).execute();
    if (codeHashes.length > 0) {
      await trx
        .insertInto('console_recovery_codes')
        .values(codeHashes.map((h) => ({ user_id: userId, code_hash: h })))
        .execute();
    }
  });
}

export async function clearRecoveryCodes(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('console_recovery_codes').where('user_id', '=', userId).execute();
}

/** Marks the code used if it is the user's and unused, in one statement (two sign-ins racing: one wins). */
export async function consumeRecoveryCode(db: Db, userId: string, codeHash: string): Promise<boolean> {
  const r = await db
    .updateTable('console_recovery_codes')
    .set({ used_at: sql`now()` })
    .where('user_id', '=', userId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return r.numUpdatedRows === 1n;
}

export async function unusedRecoveryCodes(db: Db, userId: string): Promise<number> {
  const r = await db
    .selectFrom('console_recovery_codes')
    .select(sql<string>`count(*)`.as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
