import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { start, type RunningService } from '../../src/main.js';
import { spawnRole, type RoleProcess } from './spawn-role.js';

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
  let child: RoleProcess | null = null;
  return {
    keyEnv: { HD_MNEMONIC: '', SIGNER_SOCKET: join(dir, 'signer.sock') },
    async start(serviceEnv, logOut) {
      const env = { ...serviceEnv, ROLES: 'signer', HD_MNEMONIC: mnemonic, MIGRATE_ON_START: 'false', PORT: '0', METRICS_PORT: '0' };
      if (o.separateProcess) {
        child = await spawnRole(env, 'signer', logOut);
        return;
      }
      const config = loadConfig(env);
      running = await start(config, env, createLogger(config.LOG_LEVEL, { role: 'signer' }, logOut));
    },
    async stop() {
      await running?.stop();
      running = null;
      await child?.stop();
      child = null;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
