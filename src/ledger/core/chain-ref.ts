// The ledger's view of a chain. The deposit tables' row types live in src/db/deposit-tables.ts.

/** A chain as the ledger keys it: network id and mode (mainnet vs test network). */
export interface ChainRef {
  network: string;
  mode: 'test' | 'live';
}

export const chainKey = (c: ChainRef): string => `${c.network}:${c.mode}`;
