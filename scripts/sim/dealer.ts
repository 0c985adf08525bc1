// Dealing seeds to parallel shards (`npm run sim -- --parallel K`, docs/simulation.md "Running 1,000+ seeds"): one
// shared queue of the run's seeds in order; each shard takes the next seed when it finishes one, so every seed of the
// range runs exactly once whatever each seed's duration. After the deadline (`--minutes`) no new seed is dealt; the
// seeds under way finish. Seeds already recorded (a resumed run) are not dealt again. A shard whose run rejects (its
// process died) reports that seed as failed through `onError` and takes no more seeds.

export interface DealOptions<R> {
  /** Dealing stops once `now()` is past it. */
  deadline?: number;
  now?: () => number;
  onResult: (seed: number, result: R, shard: number) => void;
  onError: (seed: number, err: unknown, shard: number) => void;
}

export interface Dealt {
  /** Seeds handed to a shard, in dealing order. */
  dealt: number[];
  /** Seeds never dealt (the deadline passed, or every shard died). */
  notDealt: number[];
}

export async function dealSeeds<R>(seeds: number[], shards: Array<(seed: number) => Promise<R>>, o: DealOptions<R>): Promise<Dealt> {
  const now = o.now ?? Date.now;
  const queue = { next: 0 };
  const dealt: number[] = [];
  const take = (): number | undefined => {
    if (queue.next >= seeds.length || now() > (o.deadline ?? Number.POSITIVE_INFINITY)) return undefined;
    const seed = seeds[queue.next++]!;
    dealt.push(seed);
    return seed;
  };
  await Promise.all(
    shards.map(async (run, shard) => {
      for (let seed = take(); seed !== undefined; seed = take()) {
        try {
          o.onResult(seed, await run(seed), shard);
        } catch (err) {
          o.onError(seed, err, shard);
          return;
        }
      }
    }),
  );
  return { dealt, notDealt: seeds.slice(queue.next) };
}

/** The seeds of `planned` still to run: those without a record (a resumed run keeps its earlier results, failures too). */
export function seedsToRun(planned: number[], recorded: Iterable<number>): number[] {
  const done = new Set(recorded);
  return planned.filter((s) => !done.has(s));
}
