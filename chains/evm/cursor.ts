import type { CursorState } from '../types.js';
import type { HeaderRef } from './rpc-types.js';

// Cursor of a block-range scanner (EVM, and TRON over its Ethereum-compatible JSON-RPC).
// Invariants: `tip` is the last block whose logs were fully delivered; `recent` lists processed blocks from the last
// final height up to `tip` inclusive, ascending, each linked to the previous by parent hash. A reorg is detected when
// the canonical hash at `tip.height` differs, and resolved by walking `recent` down to the highest block still canonical.

export interface ScanCursor {
  tip: { height: bigint; hash: string; time: Date };
  recent: Array<{ height: bigint; hash: string }>;
}

export function encodeCursor(c: ScanCursor): CursorState {
  return {
    v: 1,
    tip: { height: c.tip.height.toString(), hash: c.tip.hash, time: c.tip.time.toISOString() },
    recent: c.recent.map((b) => [b.height.toString(), b.hash]),
  };
}

export function decodeCursor(state: CursorState): ScanCursor {
  const s = state as { v?: number; tip?: { height: string; hash: string; time: string }; recent?: [string, string][] };
  if (s.v !== 1 || !s.tip || !Array.isArray(s.recent)) throw new Error('not a block-range scanner cursor');
  return {
    tip: { height: BigInt(s.tip.height), hash: s.tip.hash, time: new Date(s.tip.time) },
    recent: s.recent.map(([h, hash]) => ({ height: BigInt(h), hash })),
  };
}

export function cursorAt(header: HeaderRef): ScanCursor {
  return { tip: { height: header.height, hash: header.hash, time: header.time }, recent: [{ height: header.height, hash: header.hash }] };
}
