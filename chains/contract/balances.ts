import type { TokenSymbol } from '../vocabulary.js';

// Balances: of one address now, at a pinned height (reconcile on EVM), or of the latest final state (TRON, Solana).

/** Balances of one address: the native coin (gas, TRX, SOL) and each registry token, in base units. */
export interface AddressBalances {
  native: bigint;
  tokens: Partial<Record<TokenSymbol, bigint>>;
}

/** One balance to read: a registry token's, or the native coin's, of `address` (canonical). */
export interface BalanceQuery {
  address: string;
  asset: TokenSymbol | 'native';
}

/**
 * Optional capability (reconciliation): balances at a pinned height, in base units, one answer per item in order.
 * Implementations batch (EVM: batched JSON-RPC at `blockTag`); `rpcCalls` counts the requests sent so far.
 */
export interface BalanceReader {
  balancesAt(height: bigint, items: readonly BalanceQuery[]): Promise<bigint[]>;
  readonly balanceRpcCalls: number;
}

/** Balances read from a chain's latest final state, each with the height whose state it is. */
export interface FinalStateRead {
  balances: bigint[];
  /** Per item: the block height (slot) whose state the balance is; the highest it can be when `lowHeights` differ. */
  heights: bigint[];
  /**
   * Per item: the lowest height whose state the balance can be (TRON: the solidified block moved during the read and
   * the request does not say which state answered). Equal to `heights[i]` when the height is exact; absent: all exact.
   */
  lowHeights?: bigint[];
  /** Reads done again because the final state moved during them (TRON). */
  retries: number;
}

/**
 * Optional capability of chains that keep no state by height (TRON, Solana): balances of the latest final state, each
 * with the exact height of that state (Solana: `context.slot` of a finalized getMultipleAccounts, at least
 * `minHeight`; TRON: the solidified block, unchanged before and after the read). Reconcile then computes the books at
 * those heights (docs/journal.md).
 */
export interface FinalStateReader {
  finalStateBalances(minHeight: bigint, items: readonly BalanceQuery[]): Promise<FinalStateRead>;
}
