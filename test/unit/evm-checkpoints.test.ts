import { describe, expect, it } from 'vitest';
import { MAX_CHECKPOINTS, highestCanonical, mergeCheckpoints, type Checkpoint } from '../../chains/evm/checkpoints.js';
import { decodeCursor, encodeCursor } from '../../chains/evm/cursor.js';

// The scanner's sparse checkpoints (chains/evm/checkpoints.ts): merged above the final height, thinned with the
// final height's anchor and the newest half kept, and searched for the highest one still canonical in O(log n) reads.

const cp = (height: number, branch = 'a'): Checkpoint => ({
  height: BigInt(height),
  hash: `0x${branch}${height.toString(16).padStart(8, '0')}`,
});

describe('checkpoints', () => {
  it('merges ascending, one per height, nothing below the floor', () => {
    const out = mergeCheckpoints([cp(5), cp(10), cp(20)], [cp(30), cp(10), cp(25)], 10n);
    expect(out.map((c) => Number(c.height))).toEqual([10, 20, 25, 30]);
  });

  it('thins to the cap, keeping the lowest (the final height anchor) and the newest half as they were', () => {
    const many = Array.from({ length: 1000 }, (_, i) => cp(100 + i));
    const out = mergeCheckpoints(many, [], 100n);
    expect(out.length).toBeLessThanOrEqual(MAX_CHECKPOINTS);
    expect(out[0]!.height).toBe(100n);
    const newest = out.slice(-MAX_CHECKPOINTS / 2).map((c) => Number(c.height));
    expect(newest).toEqual(Array.from({ length: MAX_CHECKPOINTS / 2 }, (_, i) => 1100 - MAX_CHECKPOINTS / 2 + i));
    for (let i = 1; i < out.length; i++) expect(out[i]!.height).toBeGreaterThan(out[i - 1]!.height);
  });

  it('finds the highest canonical checkpoint in O(log n) reads, one read when the highest is canonical', async () => {
    const list = Array.from({ length: 128 }, (_, i) => cp(i * 10));
    for (const forkAbove of [1275, 1265, 1000, 640, 5, -1]) {
      let reads = 0;
      const found = await highestCanonical(list, async (c) => {
        reads++;
        return c.height <= BigInt(forkAbove);
      });
      const expected = list.filter((c) => c.height <= BigInt(forkAbove)).at(-1) ?? null;
      expect(found).toEqual(expected);
      expect(reads).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(list.length)) + 1);
      if (forkAbove === 1275) expect(reads).toBe(1); // the rollback's candidates stop below the replaced tip
    }
    expect(await highestCanonical([], async () => true)).toBeNull();
  });

  it('a cursor stored before checkpoints (every block from the final height - 1 to the tip) decodes unchanged', () => {
    const stored = {
      v: 1,
      tip: { height: '105', hash: '0xaa', time: '2026-01-01T00:00:00.000Z' },
      recent: [100, 101, 102, 103, 104, 105].map((h) => [String(h), `0x${h}`]),
      final: '101',
    };
    const c = decodeCursor(stored);
    expect(c.recent.map((r) => r.height)).toEqual([100n, 101n, 102n, 103n, 104n, 105n]);
    expect(c.final).toBe(101n);
    expect(encodeCursor(c)).toEqual(stored);
  });
});
