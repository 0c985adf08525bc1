import { EvmChainAdapter } from '../../../chains/evm/adapter.js';
import type { NetworkEntry } from '../../../chains/registry.js';
import type { NetworkId } from '../../../chains/types.js';
import { startNetworkAnvil } from '../network-anvil.js';
import { evmFixtureOn } from './evm.js';
import type { ConformanceFixture } from './fixture.js';

// The EVM fixture on Anvil started for a registry entry (test/support/network-anvil.ts), with the adapter given the
// entry's fee model as the service gives it (src/watcher/adapter-factory.ts):
// - an op-stack entry: Anvil charges a real L1 data fee on every transaction; 3 confirmations, a block per step;
// - a fast-block entry (`fastBlocks`, arbitrum-like: blocks every 250 ms): MANY blocks between two polls. Each
//   advance() step mines BLOCKS_PER_STEP blocks at once and the confirmation depth is FAST_DEPTH, with a small
//   getLogs range, so every poll scans a long stretch in several ranges. (Anvil's own 0.25 s interval mining is not
//   used here: blocks arriving on their own would make "one step fewer is still provisional" a race; the whole-service
//   test and the simulator run the real fast block rate.)
// Names no network: the entry decides.

export const BLOCKS_PER_STEP = 40;
/** Final after 2 steps (81 blocks counting the transfer's own), provisional after 1 (41). */
export const FAST_DEPTH = 60;

export function evmNetworkFixture(entry: NetworkEntry, o: { fastBlocks?: boolean } = {}): () => Promise<ConformanceFixture> {
  return async () => {
    // blockTimeSec 0: automine, whatever the entry's block rate (the fast rate is stepped, above).
    const node = await startNetworkAnvil(entry, { chainId: 1, blockTimeSec: 0 });
    const perStep = o.fastBlocks ? BLOCKS_PER_STEP : 1;
    return evmFixtureOn(node, {
      adapter: (tokens) =>
        new EvmChainAdapter({
          network: entry.id as NetworkId,
          mode: 'test',
          rpcUrl: node.url,
          rpcTimeoutMs: 5000,
          tokens: tokens.map((t) => ({ symbol: t.symbol, address: t.address, decimals: t.decimals })),
          confirmation: { kind: 'depth', confirmations: o.fastBlocks ? FAST_DEPTH : 3 },
          maxBlockRange: o.fastBlocks ? 25 : 1000,
          ...(entry.fees ? { fees: entry.fees } : {}),
        }),
      stepsToFinal: 2,
      advance: (steps) => node.mine(steps * perStep),
    });
  };
}
