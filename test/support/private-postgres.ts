import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './anvil.js';

// Private PostgreSQL clusters (never the machine's shared server, whose configuration CI and other runs depend on):
// initdb + pg_ctl in a temp directory on a free port, run as the `postgres` OS user when we are root (PostgreSQL
// refuses to run as root). Used by the simulator (scripts/sim/env/postgres.ts) and by the read-replica test, which
// adds a streaming standby made with pg_basebackup -R.

const run = promisify(execFile);

export function pgBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql/*/bin');
  return join(root, versions[0]!, 'bin');
}

/** PostgreSQL refuses to run as root: run its tools as the `postgres` user then. */
export async function asPostgres(bin: string, args: string[]): Promise<string> {
  const root = process.getuid?.() === 0;
  const { stdout } = root ? await run('runuser', ['-u', 'postgres', '--', bin, ...args]) : await run(bin, args);
  return stdout;
}

/** A directory the `postgres` user can write in. */
export function sharedTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o777);
  return dir;
}

export interface PrivateCluster {
  port: number;
  dir: string;
  data: string;
  url(database: string): string;
  /** Runs one statement on the `postgres` database (retried while the server starts). */
  admin(text: string): Promise<void>;
  start(): Promise<void>;
  /** `fast` closes the connections and checkpoints; `immediate` is a crash. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Stops it and removes its directory. */
  destroy(): Promise<void>;
}

function clusterOf(dir: string, data: string, port: number, opts: string): PrivateCluster {
  const bin = pgBinDir();
  const pgCtl = (args: string[]) => asPostgres(join(bin, 'pg_ctl'), ['-D', data, ...args]);
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const serverOpts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 ${opts}`;
  return {
    port,
    dir,
    data,
    url,
    async admin(text) {
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
    },
    async start() {
      await pgCtl(['-o', serverOpts, '-l', join(dir, `log-${port}`), '-w', '-t', '60', 'start']);
    },
    async stop(mode = 'fast') {
      await pgCtl(['-m', mode, '-w', 'stop']);
    },
    async destroy() {
      await pgCtl(['-m', 'immediate', '-w', 'stop']).catch(() => {});
      rmSync(data, { recursive: true, force: true });
    },
  };
}

/** initdb and start a private cluster; `opts` are extra server options (`-c name=value ...`). */
export async function startPrivateCluster(o: { dir?: string; opts?: string } = {}): Promise<PrivateCluster> {
  const dir = o.dir ?? sharedTempDir('sp-pg-');
  const data = join(dir, 'data');
  const port = await freePort();
  await asPostgres(join(pgBinDir(), 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const cluster = clusterOf(dir, data, port, o.opts ?? '');
  await cluster.start();
  return cluster;
}

/**
 * A streaming standby of `primary` (pg_basebackup -R: it connects back over replication as `postgres`, trusted from
 * 127.0.0.1 by initdb's pg_hba.conf), started on a port of its own, in `primary`'s directory.
 */
export async function startStandby(primary: PrivateCluster, o: { opts?: string } = {}): Promise<PrivateCluster> {
  const data = join(primary.dir, `standby-${Date.now()}`);
  const port = await freePort();
  await asPostgres(join(pgBinDir(), 'pg_basebackup'), [
    '-h',
    '127.0.0.1',
    '-p',
    String(primary.port),
    '-U',
    'postgres',
    '-D',
    data,
    '-R',
    '-X',
    'stream',
    '-c',
    'fast',
    '--no-sync',
  ]);
  const standby = clusterOf(primary.dir, data, port, `-c hot_standby=on ${o.opts ?? ''}`);
  await standby.start();
  return standby;
}
