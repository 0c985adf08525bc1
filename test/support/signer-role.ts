import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { start, type RunningService } from '../../src/main.js';

// The service harnesses run the documented topology (docs/signer.md): the service holds no key and a second
// `start()` with ROLES=signer, the seed and nothing else answers its signatures on a Unix socket, justifying each from
// the ledger. `keyEnv` goes into the service's environment; `start` joins the signer once the service has migrated
// the database; `stop` ends it after the service. A test that brings its own signer (SIGNER_SOCKET in its extra
// environment) or asks for the seed in process (`inProcess`) gets none. `separateProcess`: the signer role runs in a
// child process of its own (test/support/role-process.ts), as deployed, instead of sharing this process's event loop
// (benchmarks: scripts/bench/refunds.ts).

export interface HarnessSigner {
  /** HD_MNEMONIC (in process) or SIGNER_SOCKET with an empty HD_MNEMONIC (the signer role). */
  keyEnv: Record<string, string>;
  start(serviceEnv: Record<string, string>, logOut?: (line: string) => void): Promise<void>;
  stop(): Promise<void>;
}

export function harnessSigner(
  mnemonic: string,
  o: { extraEnv?: Record<string, string>; inProcess?: boolean; separateProcess?: boolean } = {},
): HarnessSigner {
  if (o.inProcess || o.extraEnv?.SIGNER_SOCKET !== undefined)
    return { keyEnv: { HD_MNEMONIC: mnemonic }, start: async () => {}, stop: async () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'sp-hs-'));
  let running: RunningService | null = null;
  let child: ChildProcess | null = null;
  return {
    keyEnv: { HD_MNEMONIC: '', SIGNER_SOCKET: join(dir, 'signer.sock') },
    async start(serviceEnv, logOut) {
      const env = { ...serviceEnv, ROLES: 'signer', HD_MNEMONIC: mnemonic, MIGRATE_ON_START: 'false', PORT: '0', METRICS_PORT: '0' };
      if (o.separateProcess) {
        child = await startRoleProcess(env, logOut);
        return;
      }
      const config = loadConfig(env);
      running = await start(config, env, createLogger(config.LOG_LEVEL, { role: 'signer' }, logOut));
    },
    async stop() {
      await running?.stop();
      running = null;
      if (child) await stopRoleProcess(child);
      child = null;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startRoleProcess(env: Record<string, string>, logOut?: (line: string) => void): Promise<ChildProcess> {
  const child = fork(new URL('./role-process.ts', import.meta.url).pathname, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const tail: string[] = [];
  const keep = (d: Buffer) => {
    for (const line of String(d).split('\n').filter(Boolean)) {
      logOut?.(line);
      tail.push(line.slice(0, 300));
      if (tail.length > 20) tail.shift();
    }
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`the signer process exited (${code}) before it was up: ${tail.join(' | ')}`)));
  });
  return child;
}

async function stopRoleProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = once(child, 'exit');
  child.send('stop');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}
