import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, isAbsolute, join, resolve } from 'node:path';
import pg from 'pg';

// Runs the Dockerfile's own steps outside Docker (docker build is not possible everywhere, docs/deploy.md): each stage
// gets a directory under a temp dir standing for its filesystem; FROM, WORKDIR, COPY (also --from a stage), ENV, RUN,
// USER, EXPOSE, HEALTHCHECK and CMD are read from the Dockerfile and carried out in order. Then the last stage's CMD is
// started with a fresh database and the HEALTHCHECK command is run until it passes; /readyz, /openapi.json and the
// API reference page /docs/api with its bundle must answer; SIGTERM must stop the service cleanly. It also checks what the image must not hold: devDependencies
// (typescript, tsx, vitest) and TypeScript sources.
//
//   npx tsx scripts/tools/dockerfile-steps.ts [--keep] [--link-build-deps]
//
// --link-build-deps: in a stage whose RUN is a full `npm ci` (devDependencies included), link this checkout's
// node_modules instead of downloading them again (faster; the runtime stage's `npm ci --omit=dev` always runs).
// Environment: TEST_PG_ADMIN_URL (postgres://postgres@127.0.0.1:5432/postgres), TEST_REDIS_URL (redis://127.0.0.1:6379), as the tests.

type Step = { op: string; args: string };
interface Stage {
  name: string;
  image: string;
  root: string;
  workdir: string;
  env: Record<string, string>;
  user?: string;
  exposed: string[];
  healthcheck?: string[];
  cmd?: string[];
}

const argv = process.argv.slice(2);
const keep = argv.includes('--keep');
const linkBuildDeps = argv.includes('--link-build-deps');
const CONTEXT = process.cwd();
const ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export function parseDockerfile(text: string): Step[] {
  const steps: Step[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (pending === '' && (line.trim() === '' || line.trimStart().startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    const m = /^([A-Za-z]+)\s+([\s\S]*)$/.exec(full);
    if (m) steps.push({ op: m[1]!.toUpperCase(), args: m[2]!.trim() });
  }
  return steps;
}

const log = (s: string) => process.stdout.write(`${s}\n`);

function inStage(stage: Stage, path: string): string {
  return isAbsolute(path) ? join(stage.root, path) : join(stage.root, stage.workdir, path);
}

function copy(stages: Map<string, Stage>, stage: Stage, args: string): void {
  const parts = args.split(/\s+/);
  const from = parts[0]?.startsWith('--from=') ? parts.shift()!.slice('--from='.length) : undefined;
  const dest = parts.pop()!;
  const source = from ? stages.get(from) : undefined;
  if (from && !source) throw new Error(`COPY --from=${from}: no such stage`);
  for (const src of parts) {
    const abs = source ? inStage(source, src) : join(CONTEXT, src);
    if (!existsSync(abs)) throw new Error(`COPY ${src}: not found`);
    const target = inStage(stage, dest);
    // Docker: a directory's contents go to dest; a file goes into dest/ when dest ends with a slash or there are many.
    const into = statSync(abs).isDirectory() ? target : dest.endsWith('/') || parts.length > 1 ? join(target, basename(src)) : target;
    mkdirSync(statSync(abs).isDirectory() ? into : join(into, '..'), { recursive: true });
    cpSync(abs, into, { recursive: true, dereference: false });
  }
}

function run(stage: Stage, command: string, cacheDir: string): void {
  const cwd = join(stage.root, stage.workdir);
  mkdirSync(cwd, { recursive: true });
  if (linkBuildDeps && /^npm ci\b/.test(command) && !/--omit=dev/.test(command)) {
    symlinkSync(join(CONTEXT, 'node_modules'), join(cwd, 'node_modules'));
    log(`    (--link-build-deps: linked ${join(CONTEXT, 'node_modules')} instead of: ${command})`);
    return;
  }
  execFileSync('/bin/sh', ['-c', command], {
    cwd,
    stdio: 'inherit',
    // The image's environment, plus a private npm cache (a RUN's `npm cache clean` must not touch the user's).
    env: { PATH: process.env.PATH, HOME: process.env.HOME, npm_config_cache: cacheDir, npm_config_update_notifier: 'false', ...stage.env },
  });
}

function jsonArray(args: string, what: string): string[] {
  const a = JSON.parse(args) as unknown;
  if (!Array.isArray(a) || a.some((x) => typeof x !== 'string')) throw new Error(`${what} must be an exec-form JSON array`);
  return a as string[];
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

function runsOk(cmd: string[], cwd: string, env: NodeJS.ProcessEnv): boolean {
  try {
    execFileSync(cmd[0]!, cmd.slice(1), { cwd, env, stdio: 'ignore', timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

async function main(): Promise<void> {
  const steps = parseDockerfile(readFileSync(join(CONTEXT, 'Dockerfile'), 'utf8'));
  const tmp = mkdtempSync(join(tmpdir(), 'dockerfile-steps-'));
  const stages = new Map<string, Stage>();
  let stage: Stage | undefined;
  const t0 = Date.now();
  log(`dockerfile-steps: ${steps.length} instructions, stages under ${tmp}`);
  for (const step of steps) {
    log(`> ${step.op} ${step.args}`);
    if (step.op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(step.args)!;
      const name = m[2] ?? `stage${stages.size}`;
      stage = { name, image: m[1]!, root: join(tmp, name), workdir: '/', env: {}, exposed: [] };
      stages.set(name, stage);
      mkdirSync(stage.root, { recursive: true });
      const major = /^node:(\d+)/.exec(stage.image)?.[1];
      if (major && process.versions.node.split('.')[0] !== major) {
        throw new Error(`${stage.image} is Node ${major}; this machine runs Node ${process.versions.node}`);
      }
      continue;
    }
    if (!stage) throw new Error(`${step.op} before FROM`);
    switch (step.op) {
      case 'WORKDIR':
        stage.workdir = isAbsolute(step.args) ? step.args : join(stage.workdir, step.args);
        mkdirSync(join(stage.root, stage.workdir), { recursive: true });
        break;
      case 'ENV': {
        const m = /^(\w+)[=\s]+(.*)$/.exec(step.args)!;
        stage.env[m[1]!] = m[2]!;
        break;
      }
      case 'COPY':
        copy(stages, stage, step.args);
        break;
      case 'RUN':
        run(stage, step.args, join(tmp, 'npm-cache', stage.name));
        break;
      case 'USER':
        stage.user = step.args;
        break;
      case 'EXPOSE':
        stage.exposed.push(...step.args.split(/\s+/));
        break;
      case 'HEALTHCHECK':
        stage.healthcheck = jsonArray(step.args.slice(step.args.indexOf('CMD') + 3).trim(), 'HEALTHCHECK CMD');
        break;
      case 'CMD':
        stage.cmd = jsonArray(step.args, 'CMD');
        break;
      default:
        throw new Error(`dockerfile-steps does not know ${step.op}`);
    }
  }
  const final = stage!;
  const app = join(final.root, final.workdir);
  log(`\nstages built in ${((Date.now() - t0) / 1000).toFixed(1)} s; checking the image (${final.name})`);

  const problems: string[] = [];
  if (!final.user || final.user === 'root' || final.user === '0') problems.push('the image runs as root (USER)');
  if (!final.healthcheck) problems.push('no HEALTHCHECK');
  if (!final.cmd) problems.push('no CMD');
  // A devDependency in the image is an error, unless the lock file itself installs it in production (a production
  // package's peer dependency, such as typescript for @solana/codecs, or a lock not regenerated since package.json
  // moved the package to devDependencies): then it is reported, since `npm ci` follows the lock.
  const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { devDependencies?: Record<string, string> };
  const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  for (const dev of Object.keys(pkg.devDependencies ?? {})) {
    if (!existsSync(join(app, 'node_modules', dev))) continue;
    if (lock.packages[`node_modules/${dev}`]?.dev) problems.push(`devDependency ${dev} is in the image`);
    else log(`note: devDependency ${dev} is in the image because package-lock.json installs it in production`);
  }
  if (existsSync(join(app, 'src'))) problems.push('TypeScript sources (src/) are in the image');
  if (!existsSync(join(app, 'dist/src/main.js'))) problems.push('dist/src/main.js is missing');
  if (!existsSync(join(app, 'dist/src/cli/index.js'))) problems.push('dist/src/cli/index.js (the compiled CLI) is missing');
  if (problems.length > 0) throw new Error(problems.join('; '));

  // Start the CMD as the container would, against a fresh database, and wait for the HEALTHCHECK to pass.
  const db = `sp_dockerfile_steps_${randomBytes(4).toString('hex')}`;
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${db}`;
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    ...final.env,
    MASTER_KEY: randomBytes(32).toString('hex'),
    DATABASE_URL: dbUrl.toString(),
    REDIS_URL,
    REDIS_KEY_PREFIX: `sp_steps_${randomBytes(4).toString('hex')}`,
    HOST: '127.0.0.1',
    PORT: String(port),
    METRICS_PORT: 'off',
    LOG_LEVEL: 'warn',
  };
  const started = Date.now();
  const child = spawn(final.cmd![0]!, final.cmd!.slice(1), { cwd: app, env, stdio: ['ignore', 'inherit', 'inherit'] });
  let exited: number | null | undefined;
  child.on('exit', (code) => {
    exited = code;
  });
  try {
    let healthyAfter: number | undefined;
    while (Date.now() - started < 60_000 && exited === undefined) {
      if (runsOk(final.healthcheck!, app, env)) {
        healthyAfter = Date.now() - started;
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    if (healthyAfter === undefined) throw new Error(`the HEALTHCHECK never passed (service exit code ${exited})`);
    log(`HEALTHCHECK passed ${healthyAfter} ms after CMD started (${final.cmd!.join(' ')})`);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    if (ready.status !== 200) throw new Error(`/readyz answered ${ready.status}: ${await ready.text()}`);
    const doc = (await (await fetch(`http://127.0.0.1:${port}/openapi.json`)).json()) as { openapi?: string };
    if (doc.openapi !== '3.1.0') throw new Error('/openapi.json did not answer the document');
    // The API reference page and its bundle, resolved from the image's production node_modules (docs/openapi.md).
    const page = await fetch(`http://127.0.0.1:${port}/docs/api`);
    const bundlePath = /<script src="(\/docs\/api\/reference\.[^"]+\.js)"><\/script>/.exec(await page.text())?.[1];
    if (page.status !== 200 || !bundlePath) throw new Error(`/docs/api answered ${page.status} without its bundle's script`);
    const bundle = await fetch(`http://127.0.0.1:${port}${bundlePath}`);
    if (bundle.status !== 200 || (await bundle.arrayBuffer()).byteLength < 100_000)
      throw new Error(`${bundlePath} answered ${bundle.status}`);
    log(`/readyz 200, /openapi.json served, /docs/api and ${bundlePath} served`);
  } finally {
    if (exited === undefined) {
      const gone = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      await Promise.race([gone, new Promise((r) => setTimeout(r, 15_000))]);
    }
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`drop database if exists ${db} with (force)`);
    await admin.end();
    if (!keep) rmSync(tmp, { recursive: true, force: true });
  }
  if (exited !== 0) throw new Error(`SIGTERM: the service exited with ${exited}, not 0`);
  log(`stopped cleanly on SIGTERM. dockerfile-steps: OK (${((Date.now() - t0) / 1000).toFixed(1)} s)${keep ? `; kept ${tmp}` : ''}`);
}

if (resolve(process.argv[1] ?? '') === resolve(import.meta.filename ?? '')) {
  main().catch((err: unknown) => {
    process.stderr.write(`dockerfile-steps: FAILED: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
