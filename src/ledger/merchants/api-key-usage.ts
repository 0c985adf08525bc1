import { sql } from 'kysely';
import type { Db } from '../../db/database.js';

/** Records key usage for operators deciding whether an old key can be revoked; at most once a minute per key. */
export async function touchApiKeyLastUsed(db: Db, keyId: string): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: sql`now()` })
    .where('id', '=', keyId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`)]))
    .execute();
}
