import { Migrator, sql, type MigrationResultSet } from 'kysely';
import type { Db } from './database.js';
import { migrations } from './migrations/index.js';

// Any fixed number works; it only has to be the same in every process of the service.
const MIGRATION_LOCK_KEY = 7_402_118_233n;

/** Runs pending migrations under a session-level advisory lock so two processes never race. */
export async function migrateToLatest(db: Db): Promise<MigrationResultSet> {
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`.execute(conn);
    try {
      const migrator = new Migrator({
        db: conn,
        provider: { getMigrations: async () => migrations },
        // The advisory lock above already serialises processes; Kysely's own lock table is kept as well.
      });
      const result = await migrator.migrateToLatest();
      if (result.error) throw result.error;
      return result;
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.execute(conn);
    }
  });
}
