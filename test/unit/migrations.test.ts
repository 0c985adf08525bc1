import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

describe('migrations', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => t.destroy());

  it('is idempotent and safe when two processes migrate at once', async () => {
    const results = await Promise.all([migrateToLatest(t.db), migrateToLatest(t.db)]);
    // The template is already migrated: nothing left to run, and neither call fails on the advisory lock.
    for (const r of results) expect(r.results ?? []).toEqual([]);
    const { rows } = await sql<{ n: bigint }>`select count(*) as n from kysely_migration`.execute(t.db);
    expect(rows[0]!.n).toBeGreaterThanOrEqual(1n);
  });

  it('gives unique evt_ ids in the spec format', async () => {
    const { rows } = await sql<{ id: string }>`select next_event_id() as id from generate_series(1, 2000)`.execute(t.db);
    const ids = rows.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^evt_\d{19}$/);
  });
});
