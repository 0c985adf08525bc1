import type { ScheduledFault } from './contract.js';

// Shrinking a failing fault schedule (issue #20 item 4; docs/simulation.md): Zeller's delta debugging (ddmin). The
// schedule is cut into n chunks; if one chunk alone still fails it becomes the schedule, else if the schedule without
// one chunk still fails that complement does, else the chunks are halved, until single faults. The result is
// 1-minimal: removing any one fault from it makes the run pass. Deterministic: no randomness, chunks are taken in
// schedule order, and a run already tried is answered from a cache (a simulated run is costly and, replayed from its
// seed, gives the same answer). The faults keep their order and their `at` times.

export interface ShrinkOptions {
  /** Stop after this many calls of `stillFails` (each one is a simulated run); the best schedule so far is returned. */
  maxRuns?: number;
  /** Called after each run, e.g. to print progress. */
  onRun?: (s: ScheduledFault[], failed: boolean) => void;
}

export interface ShrinkResult {
  schedule: ScheduledFault[];
  /** Runs of `stillFails` made (cached answers excluded). */
  runs: number;
  /** True when the run budget ran out before the schedule was 1-minimal. */
  exhausted: boolean;
}

/** The smallest schedule ddmin finds that still fails; `schedule` itself must fail (it is not re-run). */
export async function shrink(
  schedule: ScheduledFault[],
  stillFails: (s: ScheduledFault[]) => Promise<boolean>,
  opts: ShrinkOptions = {},
): Promise<ScheduledFault[]> {
  return (await shrinkWithStats(schedule, stillFails, opts)).schedule;
}

export async function shrinkWithStats(
  schedule: ScheduledFault[],
  stillFails: (s: ScheduledFault[]) => Promise<boolean>,
  opts: ShrinkOptions = {},
): Promise<ShrinkResult> {
  const maxRuns = opts.maxRuns ?? Number.POSITIVE_INFINITY;
  // Work on indices into the original schedule, so equal-looking faults stay distinct and order is preserved.
  const cache = new Map<string, boolean>();
  const state = { runs: 0 };
  const fails = async (idx: number[]): Promise<boolean | 'budget'> => {
    const key = idx.join(',');
    const known = cache.get(key);
    if (known !== undefined) return known;
    if (state.runs >= maxRuns) return 'budget';
    state.runs++;
    const s = idx.map((i) => schedule[i]!);
    const failed = await stillFails(s);
    cache.set(key, failed);
    opts.onRun?.(s, failed);
    return failed;
  };

  let current = schedule.map((_, i) => i);
  cache.set(current.join(','), true);
  let n = 2;
  let exhausted = false;
  outer: while (current.length >= 2) {
    const chunks = split(current, n);
    // 1. A single chunk that still fails.
    for (const chunk of chunks) {
      const r = await fails(chunk);
      if (r === 'budget') {
        exhausted = true;
        break outer;
      }
      if (r) {
        current = chunk;
        n = 2;
        continue outer;
      }
    }
    // 2. A complement (the schedule without one chunk) that still fails. With n = 2 the complements are the chunks.
    if (n > 2) {
      for (let i = 0; i < chunks.length; i++) {
        const complement = chunks.filter((_, j) => j !== i).flat();
        const r = await fails(complement);
        if (r === 'budget') {
          exhausted = true;
          break outer;
        }
        if (r) {
          current = complement;
          n = Math.max(n - 1, 2);
          continue outer;
        }
      }
    }
    // 3. Finer chunks, or done when every chunk is one fault.
    if (n >= current.length) break;
    n = Math.min(n * 2, current.length);
  }
  // The empty schedule: a failure without any fault (the bug needs no fault at all) is the smallest of all.
  if (!exhausted && current.length === 1) {
    const r = await fails([]);
    if (r === 'budget') exhausted = true;
    else if (r) current = [];
  }
  return { schedule: current.map((i) => schedule[i]!), runs: state.runs, exhausted };
}

/** `items` cut into `n` contiguous chunks of near-equal size (the first ones one longer), none empty. */
function split<T>(items: T[], n: number): T[][] {
  const out: T[][] = [];
  const size = Math.floor(items.length / n);
  const extra = items.length % n;
  let start = 0;
  for (let i = 0; i < n && start < items.length; i++) {
    const len = size + (i < extra ? 1 : 0);
    out.push(items.slice(start, start + len));
    start += len;
  }
  return out;
}
