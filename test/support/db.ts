import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDb, type Db } from '../../src/db/database.js';
import { PG_ADMIN_URL, databaseUrl, runPrefix, templateDbName } from './env.js';

export interface TestDatabase {
  db: Db;
  url: string;
  name: string;
  destroy(): Promise<void>;
}

/** A fresh database cloned from the migrated template: tests never share rows. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `${runPrefix()}_${randomBytes(5).toString('hex')}`;
  await adminQuery(`create database ${name} template ${templateDbName()}`);
  const url = databaseUrl(name);
  const db = createDb(url, 20);
  return {
    db,
    url,
    name,
    async destroy() {
      await db.destroy();
      await adminQuery(`drop database if exists ${name} with (force)`);
    },
  };
}

async function adminQuery(text: string): Promise<void> {
  // CREATE DATABASE ... TEMPLATE fails while another session is connected to the template; retry briefly.
  for (let attempt = 0; ; attempt++) {
    const c = new pg.Client({ connectionString: PG_ADMIN_URL });
    await c.connect();
    try {
      await c.query(text);
      return;
    } catch (err) {
      if (attempt >= 20 || !String((err as Error).message).includes('being accessed')) throw err;
      await new Promise((r) => setTimeout(r, 100 + attempt * 50));
    } finally {
      await c.end();
    }
  }
}
