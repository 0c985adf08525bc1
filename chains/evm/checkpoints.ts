// Checkpoints of a block-range scanner's cursor (chains/evm/cursor.ts, `recent`): blocks whose hash the scanner read
// while it processed them, all on the chain of its tip. They are sparse (range ends, the final height, blocks holding
// a matched transfer), so a poll reads O(1) headers whatever the number of blocks in its range; a reorg is rolled back
// above the highest checkpoint still canonical, found in O(log n) header reads.

export interface Checkpoint {
  height: bigint;
  hash: string;
}

/** At most this many checkpoints are kept: the newest half as read, the older ones thinned (the floor always kept). */
export const MAX_CHECKPOINTS = 128;

/**
 * `kept` and `added` at or above `floor`, ascending, one per height. Over MAX_CHECKPOINTS, every second checkpoint
 * between the lowest (the final height's anchor) and the newest half is dropped, repeatedly: older checkpoints grow
 * sparser, which only makes a rollback reaching that far go back further (re-scanned blocks re-observe the same
 * transfers; the ledger is idempotent on (tx, log index)).
 */
export function mergeCheckpoints(kept: readonly Checkpoint[], added: readonly Checkpoint[], floor: bigint): Checkpoint[] {
  const byHeight = new Map<bigint, Checkpoint>();
  for (const c of [...kept, ...added]) if (c.height >= floor) byHeight.set(c.height, { height: c.height, hash: c.hash });
  let out = [...byHeight.values()].sort((a, b) => (a.height < b.height ? -1 : a.height > b.height ? 1 : 0));
  const dense = Math.floor(MAX_CHECKPOINTS / 2);
  while (out.length > MAX_CHECKPOINTS) {
    const middle = out.slice(1, out.length - dense).filter((_, i) => i % 2 === 1);
    out = [out[0]!, ...middle, ...out.slice(out.length - dense)];
  }
  return out;
}

/**
 * The highest of `ascending` for which `canonical` holds, or null. Checkpoints lie on one chain, so when one is
 * canonical every lower one is too: galloping down from the top (1, 2, 4, ... below it) then bisecting costs
 * O(log d) reads for a reorg reaching d checkpoints down (one read for the usual reorg of a block or two).
 */
export async function highestCanonical(
  ascending: readonly Checkpoint[],
  canonical: (c: Checkpoint) => Promise<boolean>,
): Promise<Checkpoint | null> {
  const n = ascending.length;
  if (n === 0) return null;
  let bad = n; // lowest index known not canonical (n: none yet)
  let good = -1;
  for (let step = 1, i = n - 1; ; step *= 2) {
    if (await canonical(ascending[i]!)) {
      good = i;
      break;
    }
    bad = i;
    if (i === 0) return null;
    i = Math.max(0, i - step);
  }
  while (bad - good > 1) {
    const mid = good + Math.floor((bad - good) / 2);
    if (await canonical(ascending[mid]!)) good = mid;
    else bad = mid;
  }
  return ascending[good]!;
}
