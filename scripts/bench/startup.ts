import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import pg from 'pg';

// Start-up time and idle memory of the service, compiled (`node dist/src/main.js`, what `npm start` and the Dockerfile
// run) against tsx (`tsx src/main.ts`, development). Each run starts the process with all roles and no chain, and
// measures the time from spawn until GET /healthz answers 200, then the resident memory (RSS, summed over the process
// and its children: tsx runs the service in a child node process) after IDLE seconds of idling. The database is
// created and migrated by a warm-up run first, so the measured runs do not include migrations.
// Usage: npm run build && npm run bench:startup [-- --runs 5 --idle 10]. Figures in docs/deploy.md. Not a CI gate.

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const RUNS = Number(args.get('runs') ?? 5);
const IDLE_S = Number(args.get('idle') ?? 10);
const ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const MODES = {
  compiled: [process.execPath, 'dist/src/main.js'],
  tsx: [process.execPath, 'node_modules/tsx/dist/cli.mjs', 'src/main.ts'],
} as const;

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

/** RSS in kB of a process and all its descendants (Linux /proc). */
function treeRssKb(root: number): number {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {}
  }
  const tree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parent) if (tree.has(ppid) && !tree.has(pid)) tree.add(pid), (grew = true);
  }
  let kb = 0;
  for (const pid of tree) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      kb += Number(m?.[1] ?? 0);
    } catch {}
  }
  return kb;
}

async function runOnce(cmd: readonly string[], env: Record<string, string>, idleS: number): Promise<{ startMs: number; rssMb: number }> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(cmd[0]!, cmd.slice(1), { env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port) }, stdio: 'ignore' });
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  let startMs = Number.NaN;
  while (!exited && performance.now() - t0 < 120_000) {
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) {
      startMs = performance.now() - t0;
      break;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  if (Number.isNaN(startMs)) throw new Error(`${cmd.join(' ')} did not answer /healthz`);
  await new Promise((r) => setTimeout(r, idleS * 1000));
  const rssMb = treeRssKb(child.pid!) / 1024;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await gone;
  return { startMs, rssMb };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  if (!existsSync('dist/src/main.js')) throw new Error('dist/src/main.js is missing: npm run build first');
  const db = `sp_bench_startup_${randomBytes(4).toString('hex')}`;
  const url = new URL(ADMIN_URL);
  url.pathname = `/${db}`;
  const env = {
    MASTER_KEY: randomBytes(32).toString('hex'),
    DATABASE_URL: url.toString(),
    REDIS_URL,
    REDIS_KEY_PREFIX: `sp_bench_${randomBytes(4).toString('hex')}`,
    HOST: '127.0.0.1',
    METRICS_PORT: 'off',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
  };
  try {
    await runOnce(MODES.compiled, env, 0); // creates and migrates the database
    process.stdout.write(`startup bench: ${RUNS} runs per mode, RSS after ${IDLE_S} s idle, node ${process.version}\n`);
    const results: Record<string, { start: number[]; rss: number[] }> = {};
    for (let i = 0; i < RUNS; i++) {
      // Alternate the modes so drift in machine load hits both alike.
      for (const [mode, cmd] of Object.entries(MODES)) {
        const r = await runOnce(cmd, env, IDLE_S);
        (results[mode] ??= { start: [], rss: [] }).start.push(r.startMs);
        results[mode].rss.push(r.rssMb);
        process.stdout.write(`  ${mode.padEnd(8)} run ${i + 1}: ${r.startMs.toFixed(0)} ms to /healthz, ${r.rssMb.toFixed(1)} MB RSS\n`);
      }
    }
    for (const [mode, r] of Object.entries(results)) {
      process.stdout.write(
        `${mode.padEnd(8)} start-up median ${median(r.start).toFixed(0)} ms (min ${Math.min(...r.start).toFixed(0)}, max ${Math.max(...r.start).toFixed(0)}); idle RSS median ${median(r.rss).toFixed(1)} MB\n`,
      );
    }
  } finally {
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`drop database if exists ${db} with (force)`);
    await admin.end();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});
