import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimEvent, Violation } from '../../scripts/sim/contract.js';
import { cliArgsOf, runSecondDriver, SECOND_DRIVER, serviceCli } from '../../scripts/sim/second-driver.js';
import { TSX_SERVICE_ARGS } from '../../scripts/sim/service-build.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

// The simulator's second driver of the sweeps (scripts/sim/second-driver.ts): the CLI started where the roles start,
// real OS processes here. Its exit is judged only when it means a bug of ours (a usage error, another code, a signal),
// never for an error or an incomplete sweep (exit 1), which faults make normal. The end-to-end run (the CLI driving the
// worker's sweeps on Solana and TRON) is CI seed 8's.

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.destroy();
});

/** A "service" whose CLI is `node -e <script>`: the driver's arguments follow the script. */
const cliOf = (script: string, logFile: string) => serviceCli({ serviceArgs: ['-e', script], env: {}, logFile });

async function drive(script: string, runs = 1): Promise<{ events: SimEvent[]; violations: Violation[]; log: string }> {
  const logFile = join(mkdtempSync(join(tmpdir(), 'sim-cli-')), 'service.log');
  const events: SimEvent[] = [];
  const violations: Violation[] = [];
  await runSecondDriver(
    { cli: cliOf(script, logFile), db: t.db, runs, t0: Date.now(), latestAt: 0 },
    (kind, detail) => events.push({ at: 0, kind, detail }),
    violations,
  );
  return { events, violations, log: readFileSync(logFile, 'utf8') };
}

describe('simulator second driver', () => {
  it('starts the CLI where the roles start: from the sources under tsx, or from the compiled build', () => {
    expect(cliArgsOf(TSX_SERVICE_ARGS)).toEqual(['--import', 'tsx', 'src/cli/index.ts']);
    expect(cliArgsOf(['dist/src/main.js'])).toEqual(['dist/src/cli/index.js']);
  });

  it('runs it the drawn number of times, passes `sweep run` over test mode, and records what it created and resumed', async () => {
    const script = `console.log('settings: the environment'); console.log(JSON.stringify({ args: process.argv.slice(1), created: [{ id: 'swp_a' }], resumed: [{ id: 'swp_b' }] }))`;
    const { events, violations, log } = await drive(script, 2);
    expect(violations).toEqual([]);
    const ends = events.filter((e) => e.kind === 'sweep.cli.end');
    expect(ends.map((e) => [e.detail.run, e.detail.code, e.detail.created, e.detail.resumed])).toEqual([
      [0, 0, ['swp_a'], ['swp_b']],
      [1, 0, ['swp_a'], ['swp_b']],
    ]);
    expect(log).toMatch(/^\[cli \d+\] .*"args":\["sweep","run","--mode","test","--wait-seconds","45","--json"\]/m);
  });

  it('an error or an incomplete sweep (exit 1) is no violation; a usage error (2) or a signal is one', async () => {
    expect((await drive(`console.error('2 sweep(s) did not complete'); process.exit(1)`)).violations).toEqual([]);
    const usage = await drive(`console.error('usage: unknown option'); process.exit(2)`);
    expect(usage.violations).toEqual([
      { invariant: SECOND_DRIVER, message: expect.stringMatching(/ended with exit code 2 after \d+ ms: usage: unknown option/) },
    ]);
    const killed = await drive(`process.kill(process.pid, 'SIGSEGV')`);
    expect(killed.violations).toEqual([{ invariant: SECOND_DRIVER, message: expect.stringMatching(/ended with signal SIGSEGV/) }]);
  });
});
