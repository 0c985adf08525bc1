// The shape of one network's registry entry (chains/registry.ts lists them; one file per network in this folder).
// Pure data: nothing of ours is imported here, so that chains/vocabulary.ts can derive its types from the entries.
// Every figure a network needs (chain ids, tokens, finality, fee model, explorer, names, testnet) lives in its entry;
// code elsewhere reads the registry and never names a network (test/unit/network-registry-structure.test.ts).

export type EntryFamily = 'evm' | 'tron' | 'solana';

/** A token as its issuer publishes it: contract (or mint) in the network's display form, decimals, and the page cited. */
export interface IssuedToken {
  symbol: 'USDT' | 'USDC';
  address: string;
  decimals: number;
  /** Who issues it (Circle, Tether, USDT0 for Tether). */
  issuer: string;
  /** The issuer's page that lists this address (docs/chains.md cites the same). */
  source: string;
}

/**
 * A contract that looks like a settlement token but is not the issuer's (a bridge's wrapped copy: USDbC, USDC.e).
 * A transfer of it to a deposit address is an unmatched deposit of an unsupported token: shown, never credited.
 */
export interface LookalikeToken {
  symbol: string;
  address: string;
  decimals: number;
  /** What it is, for the operator ("USDC bridged from Ethereum by the Base bridge"). */
  note: string;
  source: string;
}

/**
 * When a block counts as final for crediting:
 * - `depth`: `confirmations` blocks deep on the node's head (the block itself counts as one);
 * - `tag`: at or below the node's `safe` or `finalized` block (L1 batch posted / L1 final on rollups; milestone on
 *   Polygon PoS), and, with `minDepth`, also that many blocks deep (both conditions).
 */
export type FinalityPolicy = { kind: 'depth'; confirmations: number } | { kind: 'tag'; tag: 'safe' | 'finalized'; minDepth?: number };

/**
 * What a transaction costs on an EVM network:
 * - `l1`: `none` (Ethereum, BSC, Polygon PoS: gas x price), `op-stack` (plus an L1 data fee the GasPriceOracle predeploy
 *   quotes and receipts report as `l1Fee`), `nitro` (Arbitrum Nitro: the L1 cost is charged as extra L2 gas; NodeInterface splits it);
 * - `minPriorityFeeWei`: a floor on the tip the network's validators enforce (Polygon PoS), as a decimal string.
 */
export interface EvmFeeModel {
  l1: 'none' | 'op-stack' | 'nitro';
  minPriorityFeeWei?: string;
  /**
   * `ignored`: the chain charges no priority fee (Arbitrum One: ArbOS ignores maxPriorityFeePerGas unless its owner
   * turns tip collection on, and its sequencer orders first come, first served), so every tip we offer is 0 and a
   * transaction is expected to pay the base fee alone. A replacement outbids by its fee cap.
   */
  tips?: 'ignored';
}

/** What each L1 fee model costs, in words (docs/chains.md prints it per network). */
export const L1_FEE_MODELS: Record<EvmFeeModel['l1'], string> = {
  none: 'gas × (base fee + tip), EIP-1559',
  'op-stack': 'L2 gas × (base fee + tip), plus an L1 data fee (GasPriceOracle predeploy; receipts report it as `l1Fee`)',
  nitro: 'gas × price, where the L1 cost is charged as extra L2 gas (NodeInterface splits it)',
};

export interface ModeEntry {
  /** The chain's own name in this mode ("Base Sepolia"). */
  name: string;
  /** EIP-155 chain id (EVM), or the id explorers know a TRON network by; decimal string. */
  chainId?: string;
  /** Explorer page of a transaction, `{tx}` for the hash. */
  explorerTxUrl: string;
  /** Live: the issuers' tokens, the default. Test: the issuers' testnet tokens, used by the testnet profiles only. */
  tokens: readonly IssuedToken[];
  lookalikes: readonly LookalikeToken[];
  /** Test mode on a public testnet: what `npm run testnet -- <profile>` needs (scripts/testnet/). */
  testnet?: TestnetProfile;
}

export interface TestnetProfile {
  /** The profile's name on the command line (`sepolia`, `base-sepolia`). */
  profile: string;
  publicRpcUrl: string;
  /** Where the fee coin comes from, and the test tokens (when their issuer runs a faucet). */
  nativeFaucet: string;
  tokenFaucet: string;
  /** The fee coin's symbol on the testnet when it differs (tBNB). */
  nativeSymbol?: string;
  /** Fee coin handed to each of the merchant's wallets, and kept by the payer for its own fees (decimal strings). */
  fundGas: string;
  feeReserve: string;
  /** Solana: the cluster's genesis hash. */
  genesisHash?: string;
}

export interface NetworkEntry {
  id: string;
  family: EntryFamily;
  /** Names on the hosted pages, and the token standard shown beside them. */
  label: { en: string; zh: string };
  standard: string;
  /** A one-line hint under the name (fee level and time to paid), per language. */
  hint: { en: string; zh: string };
  /** The checkout page's badge: a colour and up to two letters. */
  badge: { color: string; mark: string };
  /** The fee coin: symbol and decimals (wei, sun, lamports). */
  nativeCoin: { symbol: string; decimals: number };
  /** Native balance under which a hot wallet is low (decimal string of the fee coin; the alert's threshold). */
  lowNativeBalance: string;
  /** Typical block time, milliseconds (sizes the defaults below and the watcher benchmark). */
  blockTimeMs: number;
  /** Watcher defaults; every one is configurable per network and mode (docs/chains.md). */
  watcher: {
    finality: FinalityPolicy;
    pollIntervalMs: number;
    maxBlockRange: number;
    rpcMaxLagBlocks: number;
    rpcTimeoutMs: number;
  };
  /** Why `finality` was chosen, and the time to `paid` it implies (docs/chains.md prints it). */
  finalityNote: string;
  fees?: EvmFeeModel;
  live: ModeEntry;
  test: ModeEntry;
}
