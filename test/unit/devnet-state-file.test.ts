import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEVNET_DIR, devnetStateFile } from '../../src/cli/devnet.js';

// The demo's state file lives in the project's .devnet/ (issue: it was under node_modules/.cache, which `npm ci`
// deletes under a running demo), a directory neither git nor the Docker build context takes.
describe('DEVNET_STATE_FILE', () => {
  it('defaults to .devnet/state.json in the project, outside node_modules', () => {
    const file = devnetStateFile({});
    expect(file).toBe(join(process.cwd(), '.devnet', 'state.json'));
    expect(file).not.toContain('node_modules');
    expect(devnetStateFile({ DEVNET_STATE_FILE: '/tmp/x.json' })).toBe('/tmp/x.json');
  });

  it('is ignored by git and by the Docker build context', () => {
    expect(readFileSync('.gitignore', 'utf8').split('\n')).toContain(`${DEVNET_DIR}/`);
    expect(readFileSync('.dockerignore', 'utf8').split('\n')).toContain(DEVNET_DIR);
  });
});
