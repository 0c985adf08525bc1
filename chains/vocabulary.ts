import { NETWORKS, networksOfFamily, type RegisteredNetworkId } from './registry.js';

// The service's one vocabulary of chains, modes and coins: chains/, the ledger, the database types and the API all use
// these types (chains/types.ts re-exports them). Only the network registry (chains/registry.ts, pure data) is imported.

/** An API key's mode and everything it owns: test keys see test chains and data only. */
export type Mode = 'test' | 'live';

/** A payment network; `family` (chains/types.ts) says which adapter serves it. */
export type NetworkId = RegisteredNetworkId;
export const NETWORK_IDS: readonly NetworkId[] = NETWORKS.map((n) => n.id);

/** The ids of a chain family's networks, in registry order: code that differs by family never lists networks. */
export { networksOfFamily };

/** A settlement stablecoin. */
export type TokenSymbol = 'USDT' | 'USDC';
export const TOKEN_SYMBOLS: readonly TokenSymbol[] = ['USDT', 'USDC'];

/** Decimals of the API's stablecoin minor units (decisions.md: 1 USDT = 100 minor units), whatever the token's own. */
export const STABLECOIN_EXPONENT = 2;

export function isNetworkId(text: string): text is NetworkId {
  return (NETWORK_IDS as readonly string[]).includes(text);
}

export function isTokenSymbol(text: string): text is TokenSymbol {
  return (TOKEN_SYMBOLS as readonly string[]).includes(text);
}
