import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { readRecords } from '../../scripts/sim/results-file.js';

// A real parallel simulator run (scripts/sim/parallel.ts, docs/simulation.md "Running 1,000+ seeds"): two shards side
// by side, each its own child process with its own PostgreSQL, Redis and Anvil, one seed each from a build compiled
// once; every seed lands once in the results file, the report and the exit status agree with it, and resuming that
// file runs nothing again and reports the same.

const run = promisify(execFile);

const sim = (args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'scripts/sim/cli.ts', ...args], { maxBuffer: 32 * 1024 * 1024 }).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (err: { code?: number; stdout?: string; stderr?: string }) => ({ code: err.code ?? -1, out: `${err.stdout ?? ''}${err.stderr ?? ''}` }),
  );

describe('parallel simulator run', () => {
  it('2 shards × 1 seed: each seed runs once on its own shard, the combined report counts both; a resume runs none', async () => {
    const out = mkdtempSync(join(tmpdir(), 'sim-parallel-'));
    try {
      const results = join(out, 'results.jsonl');
      const common = ['--seeds', '2', '--seed', '1', '--active-seconds', '5', '--networks', 'ethereum'];
      const first = await sim([...common, '--parallel', '2', '--build', 'dist', '--out', out, '--results', results]);
      expect(first.out).toContain('2 shard(s)');
      // Whether a seed passes is the service's business (a failure prints its replay); the runner's is that each seed
      // ran once, on its own shard, and that the report and the exit status say what the records say.
      const { records } = readRecords(results);
      expect(records.map((r) => r.seed).sort()).toEqual([1, 2]);
      expect(records.map((r) => r.shard).sort()).toEqual([0, 1]);
      for (const r of records) expect(r.phases.active).toBeGreaterThan(0);
      const failed = records.filter((r) => !r.ok).map((r) => r.seed);
      const counts = `seeds: 2 of 2 run, ${2 - failed.length} passed, ${failed.length} failed`;
      expect(first.out).toContain(counts);
      for (const seed of failed) expect(first.out).toContain(`replay: npm run sim -- --seed ${seed} --active-seconds 5`);
      expect(first.code).toBe(failed.length ? 1 : 0);

      const again = await sim([...common, '--parallel', '2', '--out', out, '--resume', results]);
      expect(again.out).toContain('0 seed(s) to run of 2 (2 already in');
      expect(again.out).toContain(counts);
      expect(again.code).toBe(failed.length ? 1 : 0);
      expect(readRecords(results).records).toHaveLength(2);

      const other = await sim([...common, '--networks', 'bsc', '--out', out, '--resume', results]);
      expect(other.code).toBe(2);
      expect(other.out).toContain('ran with networks ethereum, this run has bsc');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 1_200_000);
});
