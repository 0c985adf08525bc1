import { NETWORKS, networkEntry } from '../../../chains/registry.js';
import type { NetworkId } from '../../../chains/types.js';
import type { FaultProxy } from '../../../test/support/rpc-fault-proxy.js';
import type { EvmReorgParams, EvmReorgResult } from '../faults/chain-evm.js';

// The simulator's networks besides the Anvil-backed EVM ones (env/evm.ts): Solana on the LiteSVM endpoint
// (env/solana.ts) and TRON on the fake java-tron (env/tron.ts). Each is started once per invocation and serves every
// seed; the service reaches it through fault proxies, the simulator and the invariants talk to it directly.

/** Every network of the registry (chains/registry.ts): `--networks` takes any subset. */
export const SIM_NETWORKS: readonly NetworkId[] = NETWORKS.map((n) => n.id);
export type SimNetwork = NetworkId;
/** A network of the EVM family: an Anvil node started for its registry entry (env/evm.ts). */
export type SimEvmNetwork = NetworkId;
export const isEvmNetwork = (n: string): n is SimEvmNetwork => networkEntry(n)?.family === 'evm';

/** A fault proxy in front of one of the chain's endpoints: `jsonrpc` takes every fault, `http` (a REST-style JSON
 * API: java-tron's wallet API) only transport faults (timeouts, 429, 5xx): a JSON-RPC error body means nothing there. */
export interface SimProxy {
  proxy: FaultProxy;
  protocol: 'jsonrpc' | 'http';
}

export interface SimOtherChain {
  network: 'solana' | 'tron';
  proxies: SimProxy[];
  /** CHAIN_<NETWORK>_TEST_* for the service, pointing at the proxies. */
  env: Record<string, string>;
  /** CHAIN_<NETWORK>_TEST_START_BLOCK (the chain's current height, per seed). */
  startBlockEnv(): Promise<Record<string, string>>;
  /** Sends `amount` base units of `token` from the simulator's payer to `to` (any address form the API answers);
   * resolves with the transaction id once it landed (re-broadcast meanwhile when a reorg dropped it: `onRebroadcast`). */
  pay(token: 'USDT' | 'USDC', to: string, amount: bigint, onRebroadcast?: (hash: string) => void): Promise<string>;
  /** The native coin and `tokenUnits` whole tokens of each kind for a refund hot wallet (canonical address). `txIds`:
   * the token transfers' ids exactly as the journal records them (TRON: bare lowercase hex; Solana: the base58
   * signature, case kept; ../top-ups.ts); `native`: the native base units given, set on the node (no transaction). */
  fundHotWallet(address: string, tokenUnits: bigint): Promise<{ txIds: string[]; native: bigint }>;
  /** A reorg of the chain's node (faults/chain-evm.ts), when this chain has one the simulator can reorg (TRON: the
   * Anvil under the fake); null when skipped (a block it would replace holds something that cannot be put back). */
  reorg?(params: EvmReorgParams): Promise<EvmReorgResult | null>;
  /** After a reorg: the payer's transfers it dropped, broadcast again (same bytes); their ids. */
  resync?(): Promise<string[]>;
  /** Every fault of this chain off (the drain). */
  heal(): Promise<void>;
  stop(): Promise<void>;
}

export const healedRates = { errorRate: 0, timeoutRate: 0, http429Rate: 0, http5xxRate: 0, maxLogsRange: undefined };
