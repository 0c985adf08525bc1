import { expect, it } from 'vitest';
import { createDb, pgPoolOf } from '../../src/db/database.js';
import { streamExport } from '../../src/ledger/exports/exports.js';
import { createTestDatabase } from '../support/db.js';

// The exports read through a client of the handle's pg pool (pgPoolOf), not through Kysely. Kysely ends the pool only
// when a query of its own opened it, so a handle used only by an export must still end its pool on destroy: else the
// CLI's `export` of no rows kept its idle connection, and its process, alive for pg's 10 s idle timeout.
it('destroying a handle used only by an export ends its pool and closes the connection', async () => {
  const t = await createTestDatabase();
  try {
    const db = createDb(t.url, 2);
    const pool = pgPoolOf(db);
    const period = { since: new Date('2020-01-01T00:00:00Z'), until: new Date('2020-01-02T00:00:00Z') };
    const n = await streamExport(db, 'payments', period, { tokenDecimals: () => undefined }, async () => {});
    expect([n, pool.totalCount, pool.idleCount]).toEqual([0, 1, 1]);
    await db.destroy();
    expect([pool.ended, pool.totalCount]).toEqual([true, 0]);
    expect(() => pgPoolOf(db.withoutPlugins())).toThrow(/not a handle made by createDb/);
  } finally {
    await t.destroy();
  }
});
