import type { ChainFamily, Mode, NetworkId } from '../../chains/types.js';

// What the hosted page reads of a chain's configuration (confirmations to show, EIP-681 chain ids). The watcher's
// ChainSettings (src/watcher/config.ts) satisfies it, so the page needs nothing of the watcher.
export interface ChainSettings {
  network: NetworkId;
  mode: Mode;
  family: ChainFamily;
  chainId: bigint | undefined;
  confirmation: { kind: 'depth'; confirmations: number } | { kind: 'finalized' };
}
