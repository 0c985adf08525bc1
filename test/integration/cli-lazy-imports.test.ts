import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_MASTER_KEY } from '../support/api-harness.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

// The operator CLI imports each command's modules when that command runs (src/cli/index.ts): `export` reads the
// database alone and must not load the chain SDKs, BullMQ, Redis or the migrations, which cost the export of a month
// 80 MB of RSS and seconds of start-up (docs/performance.md "Scale"). Every module the child process resolves is logged
// by a loader hook (test/support/module-log.mjs).

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.destroy());

function modulesOf(args: string[]): Promise<{ code: number; err: string; modules: string[] }> {
  const log = join(mkdtempSync(join(tmpdir(), 'cli-modules-')), 'modules.txt');
  return new Promise((resolve) => {
    execFile(
      'node',
      ['--import', 'tsx', '--import', './test/support/module-log.mjs', 'src/cli/index.ts', ...args],
      { env: { ...process.env, DATABASE_URL: t.url, MASTER_KEY: TEST_MASTER_KEY, LOG_LEVEL: 'silent', MODULE_LOG: log }, timeout: 60_000 },
      (error, _stdout, stderr) => {
        const e = error as (Error & { code?: number }) | null;
        const modules = [...new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean))];
        resolve({ code: e ? (typeof e.code === 'number' ? e.code : -1) : 0, err: stderr, modules });
      },
    );
  });
}

const HEAVY = [
  /node_modules\/ethers\//,
  /node_modules\/tronweb\//,
  /node_modules\/@solana\//,
  /node_modules\/bullmq\//,
  /node_modules\/ioredis\//,
  /src\/db\/migrations\//,
];

describe('operator CLI: a command loads what it uses', () => {
  it('export payments loads the database client and the export, not the chain SDKs, BullMQ, Redis or the migrations', async () => {
    const r = await modulesOf(['export', 'payments', '--since', '2016-01-01', '--until', '2016-01-02']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain('exported 0 payments');
    // The log is real: the modules the export needs are in it.
    expect(r.modules.some((m) => m.includes('/src/ledger/exports/exports.ts'))).toBe(true);
    expect(r.modules.some((m) => /node_modules\/(kysely|pg)\//.test(m))).toBe(true);
    expect(r.modules.filter((m) => HEAVY.some((h) => h.test(m)))).toEqual([]);
  });

  it('help imports every command for its usage text: the log sees what export does not load (BullMQ, the migrations)', async () => {
    const r = await modulesOf(['help']);
    expect(r.code, r.err).toBe(0);
    expect(r.modules.some((m) => /node_modules\/bullmq\//.test(m))).toBe(true);
  });
});
