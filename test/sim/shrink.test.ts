import { describe, expect, it } from 'vitest';
import type { ScheduledFault } from '../../scripts/sim/contract.js';
import { shrink, shrinkWithStats } from '../../scripts/sim/shrink.js';

// scripts/sim/shrink.ts: ddmin over a fault schedule, on toy predicates (no simulated run needed to prove the algorithm).
const schedule = (n: number): ScheduledFault[] =>
  Array.from({ length: n }, (_, i) => ({ at: i * 100, kind: i % 2 ? 'rpc-error' : 'kill', params: { i } }));
const ids = (s: ScheduledFault[]) => s.map((f) => f.params.i as number);

describe('shrink (ddmin)', () => {
  it('finds the one fault that matters among 40', async () => {
    const s = schedule(40);
    const out = await shrink(s, async (x) => ids(x).includes(23));
    expect(ids(out)).toEqual([23]);
  });

  it('finds a pair that only fails together, far apart, keeping schedule order and times', async () => {
    const s = schedule(32);
    const out = await shrink(s, async (x) => ids(x).includes(3) && ids(x).includes(29));
    expect(ids(out)).toEqual([3, 29]);
    expect(out.map((f) => f.at)).toEqual([300, 2900]);
  });

  it('returns a 1-minimal schedule: removing any fault makes it pass', async () => {
    const s = schedule(25);
    // Fails when at least 3 faults of kind kill fall in the first half of the run.
    const pred = async (x: ScheduledFault[]) => x.filter((f) => f.kind === 'kill' && f.at < 1300).length >= 3;
    const out = await shrink(s, pred);
    expect(out).toHaveLength(3);
    expect(await pred(out)).toBe(true);
    for (let i = 0; i < out.length; i++) expect(await pred(out.filter((_, j) => j !== i))).toBe(false);
  });

  it('is deterministic: the same input gives the same schedule and the same sequence of runs', async () => {
    const runs: number[][][] = [[], []];
    for (const k of [0, 1]) {
      await shrink(schedule(30), async (x) => ids(x).includes(7) && ids(x).includes(19) && ids(x).includes(20), {
        onRun: (x) => runs[k]!.push(ids(x)),
      });
    }
    expect(runs[0]!.length).toBeGreaterThan(0);
    expect(runs[1]).toEqual(runs[0]);
  });

  it('never asks twice about the same schedule, and stops at the run budget with the best schedule so far', async () => {
    const seen = new Set<string>();
    const pred = async (x: ScheduledFault[]) => {
      const key = ids(x).join(',');
      expect(seen.has(key)).toBe(false);
      seen.add(key);
      return ids(x).includes(5) && ids(x).includes(11);
    };
    const full = await shrinkWithStats(schedule(16), pred);
    expect(full.exhausted).toBe(false);
    expect(ids(full.schedule)).toEqual([5, 11]);
    const capped = await shrinkWithStats(schedule(16), async (x) => ids(x).includes(5) && ids(x).includes(11), { maxRuns: 3 });
    expect(capped.runs).toBe(3);
    expect(capped.exhausted).toBe(true);
    expect(ids(capped.schedule)).toEqual(expect.arrayContaining([5, 11]));
  });

  it('shrinks to the empty schedule when the run fails without any fault', async () => {
    expect(await shrink(schedule(9), async () => true)).toEqual([]);
  });
});
