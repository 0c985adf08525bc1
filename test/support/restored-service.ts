import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { payoutsCli } from '../../src/cli/payouts.js';
import { loadConfig } from '../../src/config.js';
import { createDb, type Db } from '../../src/db/database.js';
import { createLogger } from '../../src/logger.js';
import { start, type RunningService } from '../../src/main.js';
import { freePort } from './anvil.js';
import { STANDARD_TEST_MNEMONIC, testSigner } from './chain-service-harness.js';
import { PG_ADMIN_URL, REDIS_URL, databaseUrl, runPrefix } from './env.js';
import { harnessSigner } from './signer-role.js';

// What the restore tests (issue 36, "Restores never pay twice") share: a pg_dump of a harness's database, and a new
// service started on that dump restored into a new database (the first service stopped for good, an empty Redis
// namespace; a signer role of its own reading the restored ledger, as a real restore restarts every role on it, unless
// the harness signs in process), with the operator's `payouts` commands run against it. `close` drops everything it made.

const run = promisify(execFile);

/** What both service harnesses (EVM, and TRON or Solana) offer that a restore needs. */
interface Harness {
  service: RunningService;
  t: { url: string };
  env: Record<string, string>;
}

/** pg_dump (custom format) of the harness's database into `dir`; answers the file. */
export async function dumpDatabase(h: Harness, dir: string): Promise<string> {
  const dump = join(dir, 'stablepay.dump');
  await run('pg_dump', ['--format=custom', '--file', dump, '--dbname', h.t.url]);
  return dump;
}

export interface RestoredService {
  db: Db;
  service: RunningService;
  metricsPort: number;
  /** `payouts <args>` against the restored database, its printed answer as JSON (bigints as strings). */
  cli<T>(...args: string[]): Promise<T>;
  close(): Promise<void>;
}

async function admin(text: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

/**
 * Stops the harness's service for good, restores `dump` into a new database and starts a service on it, on the
 * harness's environment (`env` added: e.g. other ROLES).
 */
export async function startRestored(h: Harness, dump: string, extra: Record<string, string> = {}): Promise<RestoredService> {
  await h.service.stop();
  const stopped = h.service;
  h.service = { ...stopped, stop: async () => {} };
  const name = `${runPrefix()}_restored_${randomBytes(4).toString('hex')}`;
  const prefix = `sp_restored_${randomBytes(4).toString('hex')}`;
  await admin(`create database ${name}`);
  const url = databaseUrl(name);
  const db = createDb(url, 5);
  const signer = harnessSigner(STANDARD_TEST_MNEMONIC, { inProcess: h.env.SIGNER_SOCKET === undefined });
  let service: RunningService | null = null;
  const close = async () => {
    await service?.stop().catch(() => {});
    await signer.stop().catch(() => {});
    await db.destroy().catch(() => {});
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}:*`);
    for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
    redis.disconnect();
    await admin(`drop database if exists ${name} with (force)`);
  };
  try {
    await run('pg_restore', ['--no-owner', '--exit-on-error', '--dbname', url, dump]);
    const metricsPort = await freePort();
    const env = {
      ...h.env,
      ...extra,
      ...signer.keyEnv,
      DATABASE_URL: url,
      REDIS_KEY_PREFIX: prefix,
      PORT: '0',
      METRICS_PORT: String(metricsPort),
    };
    const config = loadConfig(env);
    service = await start(config, env, createLogger(config.LOG_LEVEL));
    await signer.start(env);
    const running = service;
    return {
      db,
      service: running,
      metricsPort,
      async cli<T>(...args: string[]): Promise<T> {
        let printed: unknown;
        await payoutsCli(args, {
          db,
          adapters: async () => running.adapters,
          keys: testSigner,
          enqueue: async () => {},
          out: (v) => {
            printed = v;
          },
        });
        return JSON.parse(JSON.stringify(printed, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))) as T;
      },
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}
