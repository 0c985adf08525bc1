import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../test/support/anvil.js';
import type { SimChains } from './contract.js';
import { isEvmNetwork, type SimNetwork, type SimOtherChain } from './env/chain.js';
import { type SimEvm, startSimEvm } from './env/evm.js';
import { type SimPostgres, startSimPostgres } from './env/postgres.js';
import { type SimRedis, startSimRedis } from './env/redis.js';
import { type SimSolana, startSimSolana } from './env/solana.js';
import { type SimTron, startSimTron } from './env/tron.js';

// Everything a simulator invocation starts once and every seed reuses: the private PostgreSQL cluster (a fresh
// database per seed from its migrated template), the private redis-server (flushed between seeds, a fresh BullMQ
// prefix per seed), and the chains (Anvil nodes behind fault proxies; a seed's watcher starts at the head it finds).

export interface SimEnvironment {
  pg: SimPostgres;
  redis: SimRedis;
  evm: SimEvm[];
  /** Solana (LiteSVM endpoint) and TRON (fake java-tron), when `--networks` names them. */
  others: SimOtherChain[];
  /** Solana among `others`, when it runs (its subscriptions: scenario-subscriptions-solana.ts). */
  solana?: SimSolana;
  /** TRON among `others`, when it runs (its subscriptions: scenario-subscriptions.ts). */
  tron?: SimTron;
  chains: SimChains;
  /** The API role's port, the same across its restarts. */
  apiPort: number;
  outDir: string;
  stop(): Promise<void>;
}

export async function startEnvironment(o: { networks: SimNetwork[]; outDir: string }): Promise<SimEnvironment> {
  mkdirSync(o.outDir, { recursive: true });
  const [pg, redis, ...evm] = await Promise.all([
    startSimPostgres(),
    startSimRedis(),
    ...o.networks.filter(isEvmNetwork).map((n, i) => startSimEvm(n, 1000 + i)),
  ]);
  const solana = o.networks.includes('solana') ? await startSimSolana(2000) : undefined;
  const tron = o.networks.includes('tron') ? await startSimTron(3000) : undefined;
  return {
    pg: pg as SimPostgres,
    redis: redis as SimRedis,
    evm: evm as SimEvm[],
    others: [...(solana ? [solana] : []), ...(tron ? [tron] : [])],
    ...(solana ? { solana } : {}),
    ...(tron ? { tron } : {}),
    chains: {
      evm: (evm as SimEvm[]).map((e) => e.contract),
      ...(solana ? { solana: solana.contract } : {}),
      ...(tron ? { tron: tron.contract } : {}),
    },
    apiPort: await freePort(),
    outDir: o.outDir,
    async stop() {
      await Promise.allSettled([
        (pg as SimPostgres).stop(),
        (redis as SimRedis).stop(),
        ...(evm as SimEvm[]).map((e) => e.stop()),
        ...(solana ? [solana.stop()] : []),
        ...(tron ? [tron.stop()] : []),
      ]);
    },
  };
}

/** `seed-<seed>.<what>`: the run's files of one seed (a shrink run names its run: `seed-7.run10003.events.json`). */
export const seedFile = (outDir: string, seed: number, what: string): string =>
  join(outDir, what.startsWith('seed.') ? `seed-${seed}.${what.slice(5)}` : `seed-${seed}.${what}`);
