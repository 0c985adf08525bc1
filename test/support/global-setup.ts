import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDb } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { PG_ADMIN_URL, RUN_PREFIX_ENV, databaseUrl, templateDbName } from './env.js';

const STALE_AFTER_MS = 6 * 3600_000;

// Builds one migrated template database per test run; each test file clones it (test/support/db.ts).
// Several runs may share the machine's Postgres at once: each only drops its own databases (and stale ones).
export default async function setup(): Promise<() => Promise<void>> {
  const started = Date.now();
  const prefix = `sp_t${started.toString(36)}${randomBytes(3).toString('hex')}`;
  process.env[RUN_PREFIX_ENV] = prefix;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await dropDatabases(admin, (name) => {
    const m = /^sp_t([0-9a-z]{8})[0-9a-f]{6}_/.exec(name);
    return m !== null && started - parseInt(m[1]!, 36) > STALE_AFTER_MS;
  });
  await admin.query(`create database ${templateDbName()}`);
  await admin.end();
  const db = createDb(databaseUrl(templateDbName()), 2);
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
  return async () => {
    const c = new pg.Client({ connectionString: PG_ADMIN_URL });
    await c.connect();
    await dropDatabases(c, (name) => name.startsWith(`${prefix}_`));
    await c.end();
  };
}

async function dropDatabases(admin: pg.Client, which: (name: string) => boolean): Promise<void> {
  const { rows } = await admin.query<{ datname: string }>(`select datname from pg_database where datname like 'sp_t%'`);
  for (const r of rows) if (which(r.datname)) await admin.query(`drop database if exists ${r.datname} with (force)`);
}
