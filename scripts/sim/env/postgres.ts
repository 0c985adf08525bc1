import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createDb } from '../../../src/db/database.js';
import { migrateToLatest } from '../../../src/db/migrate.js';
import { freePort } from '../../../test/support/anvil.js';
import { asPostgres, pgBinDir } from '../../../test/support/private-postgres.js';

// The simulator's OWN PostgreSQL cluster (never the machine's shared one): initdb + pg_ctl in a temp directory on a
// private port. `crash()` stops it with `-m immediate` (no checkpoint, as a power cut) and `start()` brings it back;
// the migrated template `sim_tpl` makes a fresh database per seed cheap (CREATE DATABASE … TEMPLATE).
// `fsync=off` (and no full-page writes) is safe for that crash: the server process dies, the machine does not, so
// every WAL write() is in the OS's page cache. `synchronous_commit` stays on: off, a commit is acknowledged before its
// WAL leaves the server's own buffers, and an immediate stop then loses commits the service was told were done, which
// no deployment's PostgreSQL does (the likely cause of a seed whose subscription, created with a 200, was then "No such
// subscription" after a postgres.restart).

export interface SimPostgres {
  port: number;
  url(database: string): string;
  /** A fresh, migrated database for one seed. */
  createSeedDatabase(name: string): Promise<string>;
  dropDatabase(name: string): Promise<void>;
  crash(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSimPostgres(): Promise<SimPostgres> {
  const bin = pgBinDir();
  const dir = mkdtempSync(join(tmpdir(), 'sp-sim-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const port = await freePort();
  await asPostgres(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=300`;
  const pgCtl = (args: string[]) => asPostgres(join(bin, 'pg_ctl'), ['-D', data, ...args]);
  const start = async () => {
    await pgCtl(['-o', opts, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']);
  };
  await start();
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const admin = async (text: string) => {
    for (let attempt = 0; ; attempt++) {
      const c = new pg.Client({ connectionString: url('postgres') });
      try {
        await c.connect();
        await c.query(text);
        return;
      } catch (err) {
        if (attempt >= 30) throw err;
        await new Promise((r) => setTimeout(r, 200));
      } finally {
        await c.end().catch(() => {});
      }
    }
  };
  await admin('create database sim_tpl');
  const tpl = createDb(url('sim_tpl'), 2);
  await migrateToLatest(tpl);
  await tpl.destroy();
  return {
    port,
    url,
    async createSeedDatabase(name) {
      await admin(`create database ${name} template sim_tpl`);
      return url(name);
    },
    dropDatabase: (name) => admin(`drop database if exists ${name} with (force)`),
    crash: async () => {
      await pgCtl(['-m', 'immediate', '-w', 'stop']);
    },
    start,
    async stop() {
      await pgCtl(['-m', 'immediate', '-w', 'stop']).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
