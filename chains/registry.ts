import { arbitrum } from './networks/arbitrum.js';
import { base } from './networks/base.js';
import { bsc } from './networks/bsc.js';
import { ethereum } from './networks/ethereum.js';
import { optimism } from './networks/optimism.js';
import { polygon } from './networks/polygon.js';
import { solana } from './networks/solana.js';
import { tron } from './networks/tron.js';
import type { NetworkEntry } from './networks/entry.js';

// The network registry: every network the gateway can serve, one entry each (chains/networks/<id>.ts), in the order
// the hosted page offers them. Everything about a network (chain ids, the issuers' tokens and their look-alikes,
// finality, fee model, explorer, names, testnet) is read from here; no other file names a network
// (test/unit/network-registry-structure.test.ts). Adding an EVM network is a new entry plus its documentation
// (docs/chains.md, "Adding an EVM network"). Which networks a deployment runs is configuration (CHAIN_<NET>_<MODE>_*),
// held at run time by chains/chain-registry.ts.

export type { NetworkEntry } from './networks/entry.js';

export const NETWORKS = [ethereum, bsc, tron, solana, base, arbitrum, optimism, polygon] as const satisfies readonly NetworkEntry[];

export type RegisteredNetworkId = (typeof NETWORKS)[number]['id'];

/** The entry of `id`; undefined for a name the registry does not hold. */
export function networkEntry(id: string): NetworkEntry | undefined {
  return (NETWORKS as readonly NetworkEntry[]).find((n) => n.id === id);
}

/** The ids of `family`'s networks, in registry order. */
export function networksOfFamily(family: NetworkEntry['family']): RegisteredNetworkId[] {
  return NETWORKS.filter((n) => n.family === family).map((n) => n.id);
}

/**
 * The network an adapter of `family` serves when its options name none: the family's only network. A family with
 * several (EVM) has no default: its adapters are always built with their network id.
 */
export function soleNetworkOfFamily(family: NetworkEntry['family']): RegisteredNetworkId {
  const ids = networksOfFamily(family);
  if (ids.length !== 1) throw new Error(`the ${family} family has ${ids.length} networks: name one`);
  return ids[0]!;
}
