import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../src/db/database.js';
import { freePort } from '../support/anvil.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { sharedTempDir } from '../support/private-postgres.js';

// DATABASE_POOL_MODE=transaction (issue 38, docs/deploy.md "PgBouncer"): the API role's whole signed path (create with
// an idempotency key, get, list, cancel) through a real PgBouncer in transaction pooling, two server connections for
// ten concurrent clients. PgBouncer comes from Debian (`apt-get install pgbouncer`; .ci/run installs it).

const PGBOUNCER = '/usr/sbin/pgbouncer';
let dir: string;
let bouncer: ChildProcess;
let port: number;
let h: ApiHarness;
let viaBouncer: Db;

async function adminQuery<T>(text: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/pgbouncer` });
  await c.connect();
  try {
    return (await c.query(text)).rows as T[];
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  if (!existsSync(PGBOUNCER)) throw new Error(`${PGBOUNCER} is missing: apt-get install -y pgbouncer (.ci/run does)`);
  dir = sharedTempDir('sp-pgbouncer-');
  port = await freePort();
  writeFileSync(join(dir, 'userlist.txt'), '"postgres" ""\n');
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      // Any database name goes to the shared server's database of the same name.
      '* = host=127.0.0.1 port=5432',
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'admin_users = postgres',
      'pool_mode = transaction',
      'default_pool_size = 2',
      'max_client_conn = 200',
      'ignore_startup_parameters = extra_float_digits',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  // PgBouncer refuses to run as root: as the postgres user then.
  const root = process.getuid?.() === 0;
  const ids = root
    ? { uid: Number(execFileSync('id', ['-u', 'postgres']).toString()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString()) }
    : {};
  bouncer = spawn(PGBOUNCER, [join(dir, 'pgbouncer.ini')], { stdio: 'ignore', ...ids });
  for (let i = 0; ; i++) {
    try {
      await adminQuery('show version');
      break;
    } catch (err) {
      if (i > 50) throw new Error(`pgbouncer did not start: ${String(err)}; log: ${readFileSync(join(dir, 'pgbouncer.log'), 'utf8')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  h = await startApiHarness((t) => {
    viaBouncer = createDb(`postgres://postgres@127.0.0.1:${port}/${t.name}`, 20);
    return { db: viaBouncer };
  });
}, 60_000);

afterAll(async () => {
  await h?.close();
  await viaBouncer?.destroy();
  bouncer?.kill('SIGTERM');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the API through PgBouncer in transaction pooling', () => {
  it('creates, replays, reads, lists and cancels sessions with 10 client connections over 2 server connections', async () => {
    const shop = await h.merchant('Bounced');
    const creates = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        shop.test.post(
          '/api/v1/checkout/sessions/create',
          { amount: `${i + 1}.00`, currency: 'USD', order_id: `bounce-${i}` },
          { headers: { 'Idempotency-Key': `idem-${i}` } },
        ),
      ),
    );
    expect(creates.map((r) => r.status)).toEqual(Array(10).fill(200));
    // The idempotent replay (its row was written in the create's transaction) answers the same session.
    const replay = await shop.test.post(
      '/api/v1/checkout/sessions/create',
      { amount: '1.00', currency: 'USD', order_id: 'bounce-0' },
      { headers: { 'Idempotency-Key': 'idem-0' } },
    );
    expect(replay.json.id).toBe(creates[0]!.json.id);
    const got = await shop.test.get(`/api/v1/checkout/sessions/${creates[3]!.json.id}`);
    expect(got.status).toBe(200);
    expect(got.json.amount_total).toBe('4.00');
    const list = await shop.test.get('/api/v1/checkout/sessions?page_size=50');
    expect(list.status).toBe(200);
    expect(list.json.data).toHaveLength(10);
    const canceled = await shop.test.post(`/api/v1/checkout/sessions/${creates[5]!.json.id}/cancel`, {});
    expect(canceled.status).toBe(200);

    // The traffic went through the bouncer, in transaction pooling, on at most its two server connections.
    const pools = await adminQuery<{ database: string; pool_mode: string; sv_active: string; sv_idle: string; sv_used: string }>(
      'show pools',
    );
    const pool = pools.find((p) => p.database === h.t.name)!;
    expect(pool.pool_mode).toBe('transaction');
    expect(Number(pool.sv_active) + Number(pool.sv_idle) + Number(pool.sv_used)).toBeLessThanOrEqual(2);
    const stats = await adminQuery<{ database: string; total_xact_count: string }>('show stats');
    expect(Number(stats.find((s) => s.database === h.t.name)!.total_xact_count)).toBeGreaterThan(20);
  });
});
