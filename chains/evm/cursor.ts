import type { CursorState } from '../types.js';
import type { HeaderRef } from './rpc-types.js';

// Cursor of a block-range scanner (EVM, and TRON over its Ethereum-compatible JSON-RPC).
// Invariants: `tip` is the last block whose logs were fully delivered; `recent` lists processed blocks from the last
// final height up to `tip` inclusive, ascending, each linked to the previous by parent hash. A reorg is detected when
// the canonical hash at `tip.height` differs, and resolved by walking `recent` down to the highest block still canonical.
// `final` is the highest final height reported with this cursor (the watcher confirms credits up to the poll's final
// height in the same commit as the cursor): no credit was ever confirmed from a block above it, so only a reorg
// replacing a block at or below it is too deep. Absent in cursors written before it existed (then the current final
// height is used, as before).

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
