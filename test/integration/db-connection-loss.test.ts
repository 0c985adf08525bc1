import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../src/db/database.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

// A connection held out of the pool (the watcher's leader lock, a transaction between two statements) whose server
// process goes away must not crash the process: the loss surfaces as a rejected query on that connection. Found by the
// simulator (scripts/sim, docs/simulation.md): a PostgreSQL restart killed every worker and watcher process.
describe('createDb: a lost checked-out connection', () => {
  let t: TestDatabase;
  let db: Db;
  beforeAll(async () => {
    t = await createTestDatabase();
    db = createDb(t.url, 2);
  });
  afterAll(async () => {
    await db.destroy();
    await t.destroy();
  });

  it('is reported to the next query on it, not as an uncaught error event', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const outcome = await db.connection().execute(async (conn) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(conn);
        await sql`select pg_terminate_backend(${rows[0]!.pid})`.execute(t.db);
        // The termination reaches the idle, checked-out client as an 'error' event.
        await new Promise((r) => setTimeout(r, 500));
        return sql`select 1`.execute(conn).then(
          () => 'answered',
          (err: Error) => `rejected: ${err.message}`,
        );
      });
      expect(outcome).toMatch(/^rejected: /);
      expect(uncaught).toEqual([]);
      // The pool replaces the connection: the next query works.
      expect((await sql<{ one: number }>`select 1 as one`.execute(db)).rows[0]!.one).toBe(1);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});
