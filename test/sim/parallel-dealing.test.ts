import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dealSeeds, seedsToRun } from '../../scripts/sim/dealer.js';
import { createPrng } from '../../scripts/sim/prng.js';
import { appendRecord, configMismatch, readRecords } from '../../scripts/sim/results-file.js';
import { combineRecords, formatReport, type RunConfig, runSpans, type SeedRecord, seedRanges } from '../../scripts/sim/run-report.js';
import { reportResults } from '../../scripts/sim/results-report.js';

// The parallel simulator's bookkeeping (scripts/sim/dealer.ts, run-report.ts, results-file.ts; docs/simulation.md
// "Running 1,000+ seeds"): seeds dealt from one queue to shards of uneven speed run exactly once each; a deadline stops
// the dealing but not the seeds under way; a dead shard's seed is reported and the others go on; the combined report
// counts what the records say, and a resumed run skips exactly the recorded seeds.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const config: RunConfig = {
  activeSeconds: '20',
  drainSeconds: '120',
  networks: 'ethereum',
  intensity: '1',
  checkEvery: '3',
  signer: 'remote',
};

const rec = (seed: number, ok: boolean, extra: Partial<SeedRecord> = {}): SeedRecord => ({
  seed,
  ok,
  wallMs: 1000 * seed,
  phases: { setup: 1000, active: 2000 },
  faults: { reorg: 1, 'kill:worker': seed % 2 },
  violations: ok ? [] : [{ invariant: 'drain', message: `seed ${seed} hung` }],
  shard: seed % 3,
  commit: seed < 5 ? 'aaa1111' : 'bbb2222',
  finishedAt: '2025-01-01T00:00:00.000Z',
  load1: seed,
  config,
  eventsFile: `/tmp/seed-${seed}.events.json`,
  logFile: `/tmp/seed-${seed}.service.log`,
  ...extra,
});

describe('dealing seeds to parallel shards', () => {
  it('runs every seed exactly once across shards of uneven speed, each shard one seed at a time', async () => {
    const seeds = Array.from({ length: 60 }, (_, i) => 100 + i);
    const delays = createPrng(5);
    const ran: number[] = [];
    const busy = [false, false, false];
    const byShard: number[][] = [[], [], []];
    const out = await dealSeeds(
      seeds,
      [0, 1, 2].map((shard) => async (seed: number) => {
        expect(busy[shard]).toBe(false);
        busy[shard] = true;
        await sleep((shard === 2 ? 20 : 1) + delays.int(0, 3));
        busy[shard] = false;
        ran.push(seed);
        return seed * 2;
      }),
      {
        onResult: (seed, r, shard) => {
          expect(r).toBe(seed * 2);
          byShard[shard]!.push(seed);
        },
        onError: () => expect.unreachable(),
      },
    );
    expect([...ran].sort((a, b) => a - b)).toEqual(seeds);
    expect(out).toEqual({ dealt: seeds, notDealt: [] });
    for (const s of byShard) expect(s.length).toBeGreaterThan(0);
    // The fastest shard (0) took more seeds than the slowest (2): a shared queue, not a fixed split.
    expect(byShard[0]!.length).toBeGreaterThan(byShard[2]!.length);
  });

  it('stops dealing at the deadline; the seeds under way finish and the rest are reported as not dealt', async () => {
    const clock = { t: 0 };
    const done: number[] = [];
    const out = await dealSeeds(
      [1, 2, 3, 4, 5, 6, 7, 8],
      [0, 1].map(() => async (seed: number) => {
        await sleep(1);
        clock.t += 10; // each seed "takes" 10 minutes of the fake clock
        return seed;
      }),
      { deadline: 25, now: () => clock.t, onResult: (s) => done.push(s), onError: () => expect.unreachable() },
    );
    // t=0: 1 and 2 dealt; t=10,20: 3 and 4; at t=30 and 40 the deadline (25) has passed.
    expect(out.dealt).toEqual([1, 2, 3, 4]);
    expect(out.notDealt).toEqual([5, 6, 7, 8]);
    expect([...done].sort()).toEqual([1, 2, 3, 4]);
  });

  it('a shard that dies reports its seed once and takes no more; the other shards run the rest', async () => {
    const results: number[] = [];
    const errors: Array<[number, number]> = [];
    const out = await dealSeeds(
      [1, 2, 3, 4, 5, 6],
      [
        async (seed: number) => {
          await sleep(2);
          if (seed === 3) throw new Error('shard exited (SIGKILL)');
          return seed;
        },
        async (seed: number) => {
          await sleep(5);
          return seed;
        },
      ],
      { onResult: (s) => results.push(s), onError: (seed, _err, shard) => errors.push([seed, shard]) },
    );
    expect(errors).toEqual([[3, 0]]);
    expect([...results, 3].sort()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(out.notDealt).toEqual([]);
  });

  it('a resumed run deals only the seeds the results file lacks', () => {
    expect(seedsToRun([1, 2, 3, 4, 5, 6], [2, 5, 9])).toEqual([1, 3, 4, 6]);
    expect(seedsToRun([1, 2], [])).toEqual([1, 2]);
  });
});

describe('the combined report of a parallel run', () => {
  it('counts passed, failed and not run, the consecutive range, faults, phase means and commits', () => {
    const planned = Array.from({ length: 10 }, (_, i) => i + 1);
    const records = [1, 2, 3, 4, 5, 6, 8].map((s) => rec(s, s !== 6)).concat([rec(42, true)]);
    const c = combineRecords(planned, records);
    expect(c.run).toBe(7);
    expect(c.passed).toBe(6);
    expect(c.failed.map((r) => r.seed)).toEqual([6]);
    expect(c.notRun).toEqual([7, 9, 10]);
    expect(c.consecutive).toEqual({ count: 5, first: 1, last: 5 });
    expect(c.faultsByKind).toEqual({ reorg: 7, 'kill:worker': 3 }); // one kill on each odd seed: 1, 3, 5
    expect(c.phaseMeans).toEqual({ setup: 1000, active: 2000 });
    expect(c.commits).toEqual({ aaa1111: [1, 2, 3, 4], bbb2222: [5, 6, 8] });
    expect(c.outside).toBe(1);
    expect(c.seedMs).toBe(1000 * (1 + 2 + 3 + 4 + 5 + 6 + 8));
    expect(c.load1).toEqual({ min: 1, max: 8, mean: 29 / 7 });
    const text = formatReport(c).join('\n');
    expect(text).toContain('seeds: 7 of 10 run, 6 passed, 1 failed (6); not run: 7, 9–10');
    expect(text).toContain('consecutive seeds passed: 5 (seeds 1–5)');
    expect(text).toContain('replay: npm run sim -- --seed 6 --active-seconds 20 --networks ethereum --intensity 1');
    expect(text).toContain('drain: seed 6 hung');
    expect(text).toContain('commits: aaa1111 (seeds 1–4); bbb2222 (seeds 5–6, 8)');
  });

  it('a failing first seed leaves no consecutive range; a later record of a seed replaces an earlier one', () => {
    const c = combineRecords([1, 2], [rec(1, false), rec(2, true)]);
    expect(c.consecutive.count).toBe(0);
    expect(formatReport(c)).toContain('consecutive seeds passed: 0 (the first seed did not pass)');
    expect(combineRecords([1], [rec(1, false), rec(1, true)]).passed).toBe(1);
    expect(seedRanges([5, 1, 2, 3, 9, 10])).toBe('1–3, 5, 9–10');
  });
});

describe('a run resumed across sessions', () => {
  // Session 1: seeds 1–3 from 10:00 (each 60 s, side by side); session 2, a day later: seeds 4–5.
  const at = (iso: string, seed: number, ok = true) => rec(seed, ok, { finishedAt: iso, wallMs: 60_000 });
  const records = [
    at('2026-01-01T10:01:00.000Z', 1),
    at('2026-01-01T10:01:30.000Z', 2),
    at('2026-01-01T10:02:10.000Z', 3),
    at('2026-01-02T09:01:00.000Z', 4),
    at('2026-01-02T09:02:00.000Z', 5),
  ];

  it('has one span per session, its wall time from the first seed start to the last seed end', () => {
    expect(runSpans(records)).toEqual([
      { from: '2026-01-01T10:00:00.000Z', to: '2026-01-01T10:02:10.000Z', seeds: 3, wallMs: 130_000 },
      { from: '2026-01-02T09:00:00.000Z', to: '2026-01-02T09:02:00.000Z', seeds: 2, wallMs: 120_000 },
    ]);
    const text = formatReport(combineRecords([1, 2, 3, 4, 5], records)).join('\n');
    expect(text).toContain('wall time: 4.2 min in 2 span(s), 1.20 seeds per minute');
  });

  it("--report prints the file's combined report without running a seed; its range is the file's unless given", () => {
    const dir = mkdtempSync(join(tmpdir(), 'sim-report-'));
    try {
      const file = join(dir, 'results.jsonl');
      for (const r of records.filter((r) => r.seed !== 4)) appendRecord(file, r);
      const lines: string[] = [];
      expect(reportResults(file, undefined, (l) => lines.push(l))).toBe(0);
      expect(lines).toContain('seeds: 4 of 5 run, 4 passed, 0 failed; not run: 4');
      expect(lines).toContain('consecutive seeds passed: 3 (seeds 1–3)');
      expect(lines).toContain('options: --active-seconds 20 --drain-seconds 120 --networks ethereum --intensity 1 --check-every 3');
      appendRecord(file, at('2026-01-02T09:03:00.000Z', 4, false));
      const again: string[] = [];
      expect(reportResults(file, [1, 2, 3, 4, 5], (l) => again.push(l))).toBe(1);
      expect(again).toContain('seeds: 5 of 5 run, 4 passed, 1 failed (4)');
      expect(reportResults(file, [1, 2], () => {})).toBe(0);
      const empty = join(dir, 'empty.jsonl');
      writeFileSync(empty, 'not json\n');
      const none: string[] = [];
      expect(reportResults(empty, undefined, (l) => none.push(l))).toBe(1);
      expect(none[0]).toContain('no seed results in it (1 unreadable line(s))');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the results file', () => {
  it('round-trips records, skips a line cut short by a crash, and refuses a resume with other seed options', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sim-results-'));
    try {
      const file = join(dir, 'results.jsonl');
      expect(readRecords(file)).toEqual({ records: [], skipped: 0 });
      appendRecord(file, rec(1, true));
      appendRecord(file, rec(2, false));
      writeFileSync(file, `${readFileSync(file, 'utf8')}{"seed":3,"ok":tr`);
      const { records, skipped } = readRecords(file);
      expect(records.map((r) => [r.seed, r.ok])).toEqual([
        [1, true],
        [2, false],
      ]);
      expect(skipped).toBe(1);
      expect(configMismatch(records, config)).toBeUndefined();
      expect(configMismatch(records, { ...config, networks: 'ethereum,bsc' })).toBe(
        'seed 1 in the results file ran with networks ethereum, this run has ethereum,bsc',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
