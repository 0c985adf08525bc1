import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { buildModeOf, prepareServiceBuild } from '../../scripts/sim/service-build.js';

// The simulator's compiled roles (scripts/sim/service-build.ts): the tree transpiled into a private directory that
// Node starts without tsx. Started with no configuration, the compiled service loads every module and stops at its
// configuration check, as `node dist/src/main.js` does; the directory is gone after remove().

const run = promisify(execFile);

describe('simulator service build', () => {
  it('--build / SIM_SERVICE_BUILD choose tsx or dist, and refuse anything else', () => {
    expect(buildModeOf(undefined, {})).toBe('tsx');
    expect(buildModeOf(undefined, { SIM_SERVICE_BUILD: 'dist' })).toBe('dist');
    expect(buildModeOf('tsx', { SIM_SERVICE_BUILD: 'dist' })).toBe('tsx');
    expect(() => buildModeOf('esbuild', {})).toThrow('"tsx" or "dist"');
  });

  it('dist: the compiled service starts under plain node and reaches its configuration check', async () => {
    const b = await prepareServiceBuild(process.cwd(), 'dist');
    try {
      expect(b.args).toEqual(['dist/src/main.js']);
      expect(existsSync(`${b.cwd}/dist/src/checkout/assets`)).toBe(existsSync('src/checkout/assets'));
      const failed = await run(process.execPath, b.args, { cwd: b.cwd, env: { PATH: process.env.PATH ?? '', ROLES: 'api' } }).then(
        () => undefined,
        (err: { stderr?: string; code?: number }) => err,
      );
      expect(failed?.code).not.toBe(0);
      expect(failed?.stderr).toContain('MASTER_KEY');
    } finally {
      b.remove();
    }
    expect(existsSync(b.cwd)).toBe(false);
  }, 600_000);
});
