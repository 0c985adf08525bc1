import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';

// The signer role as a process of its own for `npm run dev` (docs/signer.md): the only process of the demo given the
// seed. It starts from the sources (`node --import tsx src/main.ts`, ROLES=signer) on a Unix socket, after the
// database is migrated (it does not migrate: MIGRATE_ON_START=false, as in production); the service and the operator's
// CLI get SIGNER_SOCKET and no HD_MNEMONIC, so the demo runs the documented topology. Its log lines go to the demo's
// stderr, prefixed.

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

export interface SignerProcess {
  pid: number;
  socketPath: string;
  stop(): Promise<void>;
}

/** Starts the signer with `env` (the seed, the database, the chains' settings) and waits until its socket answers. */
export async function startSignerProcess(env: Record<string, string | undefined>, socketPath: string): Promise<SignerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    // Its metrics on a port of its own (any free one): the service's METRICS_PORT is taken by the service.
    env: { ...env, ROLES: 'signer', SIGNER_SOCKET: socketPath, MIGRATE_ON_START: 'false', PORT: '0', METRICS_PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let tail = '';
  child.stderr?.on('data', (d: Buffer) => {
    tail = (tail + String(d)).slice(-4000);
    if (env.LOG_LEVEL === 'debug' || env.LOG_LEVEL === 'info') process.stderr.write(`[signer] ${String(d)}`);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the signer process exited (${child.exitCode}) before answering: ${tail.trim()}`);
    if (await healthy(socketPath)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the signer did not answer on ${socketPath} within 90 s: ${tail.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { pid: child.pid ?? 0, socketPath, stop: () => stopChild(child, exited) };
}

function healthy(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/healthz', method: 'GET', timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}
