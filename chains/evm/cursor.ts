import type { CursorState } from '../types.js';
import type { HeaderRef } from './rpc-types.js';

// Cursor of a block-range scanner (EVM, and TRON over its Ethereum-compatible JSON-RPC).
// Invariants: `tip` is the last block whose logs were fully delivered; `recent` lists checkpoints (chains/evm/checkpoints.ts),
// ascending, one per height, all on the chain of `tip` and including it: blocks whose hash was read while they were
// processed (range ends, the final height, blocks holding a matched transfer), from the cursor's final height up. They
// are sparse: a range of any length adds O(1) of them plus its matched blocks. A reorg is detected when the canonical
// hash at `tip.height` differs, and resolved by rolling back above the highest checkpoint still canonical.
// `final` is the highest final height reported with this cursor (the watcher confirms credits up to the poll's final
// height in the same commit as the cursor): no credit was ever confirmed from a block above it, so only a reorg
// replacing a block at or below it is too deep. When it is at or below `tip`, `recent` holds a checkpoint at exactly
// that height (so a reorg that left it in place is never mistaken for a deep one). Absent in cursors written before it
// existed (then the current final height is used, as before).
// The stored format (v: 1) did not change when `recent` went from every block above the final height to checkpoints:
// a cursor written before (contiguous blocks from the final height - 1 to the tip) is a valid set of checkpoints.

export interface ScanCursor {
  tip: { height: bigint; hash: string; time: Date };
  recent: Array<{ height: bigint; hash: string }>;
  final?: bigint;
}

export function encodeCursor(c: ScanCursor): CursorState {
  return {
    v: 1,
    tip: { height: c.tip.height.toString(), hash: c.tip.hash, time: c.tip.time.toISOString() },
    recent: c.recent.map((b) => [b.height.toString(), b.hash]),
    ...(c.final !== undefined ? { final: c.final.toString() } : {}),
  };
}

export function decodeCursor(state: CursorState): ScanCursor {
  const s = state as { v?: number; tip?: { height: string; hash: string; time: string }; recent?: [string, string][]; final?: string };
  if (s.v !== 1 || !s.tip || !Array.isArray(s.recent)) throw new Error('not a block-range scanner cursor');
  return {
    tip: { height: BigInt(s.tip.height), hash: s.tip.hash, time: new Date(s.tip.time) },
    recent: s.recent.map(([h, hash]) => ({ height: BigInt(h), hash })),
    ...(typeof s.final === 'string' && /^\d+$/.test(s.final) ? { final: BigInt(s.final) } : {}),
  };
}

/** The cursor's `final` once a poll reporting `final` commits with it: never lowered. */
export function finalSeen(c: ScanCursor, final: bigint): bigint {
  return c.final !== undefined && c.final > final ? c.final : final;
}

export function cursorAt(header: HeaderRef): ScanCursor {
  return { tip: { height: header.height, hash: header.hash, time: header.time }, recent: [{ height: header.height, hash: header.hash }] };
}
