import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import type { RunningService } from '../../src/main.js';
import { createVerifiedAdapters } from '../../src/watcher/start.js';
import { loadWatcherSettings } from '../../src/watcher/config.js';

// TEST_SERVICE_BUILD=dist: the service harness starts the compiled build (`node dist/src/main.js`, what `npm start`
// and the Dockerfile run) as a child process instead of calling start() from the TypeScript sources in the test
// process (docs/deploy.md, docs/testing.md). `npm run test:compiled` builds and runs the e2e subset this way.

export const COMPILED_ENTRY = resolve('dist/src/main.js');

export function compiledBuildRequested(): boolean {
  return process.env.TEST_SERVICE_BUILD === 'dist';
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

/** Starts `node dist/src/main.js` with `env` and waits for /healthz; `adapters` are built here from the same env (for test helpers). */
export async function startCompiledService(env: Record<string, string>, logOut?: (line: string) => void): Promise<RunningService> {
  if (!existsSync(COMPILED_ENTRY)) throw new Error(`${COMPILED_ENTRY} is missing: run npm run build first`);
  const port = env.PORT && env.PORT !== '0' ? Number(env.PORT) : await freePort();
  // The console's own listener (the console role) on a port chosen here too, so the caller learns it.
  const withConsole = (env.ROLES ?? '').split(',').includes('console') && env.CONSOLE_PATH === undefined;
  const consolePort = withConsole
    ? env.CONSOLE_PORT && env.CONSOLE_PORT !== '0'
      ? Number(env.CONSOLE_PORT)
      : await freePort()
    : undefined;
  const child = spawn(process.execPath, [COMPILED_ENTRY], {
    env: { PATH: process.env.PATH, ...env, PORT: String(port), ...(consolePort ? { CONSOLE_PORT: String(consolePort) } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const onData = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    output = (output + text).slice(-4000);
    if (logOut) for (const line of text.split('\n').filter(Boolean)) logOut(line);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((r) =>
    child.once('exit', (code) => {
      exitCode = code;
      r();
    }),
  );
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exitCode !== undefined) throw new Error(`the compiled service exited with ${exitCode}: ${output}`);
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the compiled service did not answer /healthz within 60 s: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const adapters = await createVerifiedAdapters(loadWatcherSettings(env), env);
  return {
    adapters,
    port,
    consolePort,
    async stop() {
      if (exitCode === undefined) {
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
      }
      if (exitCode === undefined) child.kill('SIGKILL');
      else if (exitCode !== 0) throw new Error(`the compiled service stopped with exit code ${exitCode}: ${output}`);
    },
  };
}
