import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_ADMIN_URL, REDIS_URL, databaseUrl, runPrefix } from '../support/env.js';

// deploy/kubernetes/ mounts every pod's root filesystem read-only, with an emptyDir at /tmp (docs/deploy.md, "The
// pods"). This runs what the pods run in the same condition: a private mount namespace (unshare) in which every mount
// but /proc, /sys and /dev is remounted read-only and an empty tmpfs is the one writable directory, given as TMPDIR
// (the pods' emptyDir at /tmp; not /tmp itself, which may hold the checkout being tested). There, the migration Job's command
// creates and migrates a new database, and the service (all three roles, MIGRATE_ON_START=false as in the pods) starts,
// answers its probes, serves metrics from PostgreSQL and Redis, and stops cleanly on SIGTERM. Needs root (CI is).

const READ_ONLY = `set -eu
for m in $(awk '{print $5}' /proc/self/mountinfo | sort -u); do
  case "$m" in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue ;; esac
  mount -o remount,bind,ro "$m"
done
mount -t tmpfs -o size=64m,mode=1777 tmpfs "$TMPDIR"
for d in / "$PWD" "$TMPDIR/.."; do
  if touch "$d/.sp-rofs-probe" 2>/dev/null; then echo "still writable: $d" >&2; exit 97; fi
done
exec "$@"`;

interface Run {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
}

function readOnlyRun(args: string[], env: Record<string, string>): Run {
  const child = spawn(
    'unshare',
    ['-m', '--propagation', 'private', 'sh', '-c', READ_ONLY, 'sh', process.execPath, '--import', 'tsx', ...args],
    {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TMPDIR: scratch, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exit };
}

async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });
}

async function get(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
}

const dbName = `${runPrefix()}_ro_${randomBytes(4).toString('hex')}`;
// Created here, read-only inside the namespace until the tmpfs covers it there.
const scratch = mkdtempSync(join(tmpdir(), 'sp-ro-'));
afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  await c.query(`drop database if exists ${dbName} with (force)`);
  await c.end();
});

describe('the pods on a read-only root filesystem (deploy/kubernetes)', () => {
  it('migrate (the Job), then the service with every role: probes, metrics and a clean stop, writing no file', {
    timeout: 600_000,
  }, async () => {
    const [port, metricsPort, consolePort] = [await freePort(), await freePort(), await freePort()];
    const env = {
      MASTER_KEY: '5a'.repeat(32),
      DATABASE_URL: databaseUrl(dbName),
      REDIS_URL,
      REDIS_KEY_PREFIX: `sp-ro-${randomBytes(4).toString('hex')}`,
      MIGRATE_ON_START: 'false',
      PORT: String(port),
      ROLES: 'api,worker,watcher,console',
      CONSOLE_PORT: String(consolePort),
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'info',
    };

    // The control: there, a write beside the sources fails, and one to the temporary directory succeeds.
    const control = readOnlyRun(
      [
        '-e',
        "require('node:fs').writeFileSync(require('node:path').join(require('node:os').tmpdir(), 'sp-ro-probe'), 'x'); require('node:fs').writeFileSync('sp-ro-probe', 'x')",
      ],
      env,
    );
    expect(await control.exit).not.toBe(0);
    expect(control.output()).toContain("EROFS: read-only file system, open 'sp-ro-probe'");

    // The Job: the CLI's migrate, on a database that does not exist yet.
    const migrate = readOnlyRun(['src/cli/index.ts', 'migrate'], env);
    const migrateCode = await migrate.exit;
    expect({ code: migrateCode, output: migrate.output() }).toMatchObject({ code: 0 });
    expect(migrate.output()).toMatch(/"applied":\s*\[\s*"\d{4}_/);

    const service = readOnlyRun(['src/main.ts'], env);
    let exited: number | null | undefined;
    void service.exit.then((code) => {
      exited = code;
    });
    try {
      await expect
        .poll(
          async () => {
            if (exited !== undefined) throw new Error(`the service exited with ${exited}: ${service.output()}`);
            return (await get(`http://127.0.0.1:${port}/healthz`).catch(() => ({ status: 0 }))).status;
          },
          { timeout: 300_000, interval: 250 },
        )
        .toBe(200);
      expect((await get(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
      expect((await get(`http://127.0.0.1:${port}/openapi.json`)).status).toBe(200);
      expect((await get(`http://127.0.0.1:${port}/docs/errors`)).status).toBe(200);
      expect(await get(`http://127.0.0.1:${metricsPort}/healthz`)).toEqual({ status: 200, text: 'ok\n' });
      // The console pod's startup and readiness probe (deploy/kubernetes/app/console.yaml).
      expect((await get(`http://127.0.0.1:${consolePort}/healthz`)).status).toBe(200);
      const scrape = await get(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(scrape.status).toBe(200);
      expect(scrape.text).toMatch(/^stablepay_queue_jobs\{queue="payouts",state="waiting"\} 0$/m);
      // Every scrape collector (ledger from PostgreSQL, queues from Redis) ran without an error.
      expect(scrape.text).not.toMatch(/^stablepay_metrics_collector_errors_total\{[^}]*\} [1-9]/m);
    } finally {
      service.child.kill('SIGTERM');
    }
    expect({ code: await service.exit, output: service.output() }).toMatchObject({ code: 0 });
    expect(service.output()).not.toMatch(/EROFS|read-only file system/i);
    expect(service.output()).toContain('service started');
  });
});
