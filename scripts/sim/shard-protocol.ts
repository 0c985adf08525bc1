import type { SeedOptions } from './seed.js';
import type { SeedSummary } from './seed-lines.js';
import type { SimNetwork } from './env/chain.js';

// The messages between the parallel runner (parallel.ts) and each of its shards (shard.ts, a child process with its
// own private PostgreSQL, Redis and chains), over Node's IPC channel.

/** A seed's options as the runner sends them (the invariants are the shard's own import; no given schedule). */
export type ShardSeedOptions = Omit<SeedOptions, 'runIndex' | 'invariants' | 'faults'>;

export type ToShard =
  | { type: 'start'; networks: SimNetwork[]; outDir: string }
  | { type: 'seed'; seed: number; options: ShardSeedOptions }
  | { type: 'stop' };

export type FromShard =
  | { type: 'ready'; ms: number }
  | { type: 'result'; seed: number; result: SeedSummary }
  | { type: 'error'; message: string };
