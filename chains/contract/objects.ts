import type { TokenSymbol } from '../vocabulary.js';

// What every part of the chain contract speaks of: token contracts, blocks, observed transfers, the watcher's cursor
// and watch set, and the reading side (TransferSource) the watcher drives.

/** One token contract (EVM/TRON) or mint (Solana) as the registry knows it. `address` is canonical (see normalizeAddress). */
export interface TokenContract {
  symbol: TokenSymbol;
  address: string;
  decimals: number;
}

/** A bridged copy of a settlement token (USDbC, USDC.e: the network registry's look-alikes): reported, never credited. */
export interface LookalikeContract {
  symbol: string;
  address: string;
  decimals: number;
  note: string;
}

/** A block (EVM/TRON) or slot (Solana). `height` is the block number or slot. */
export interface BlockRef {
  height: bigint;
  hash: string;
  time: Date;
}

/**
 * One incoming token transfer to a watched address. Unique by (network, mode, txHash, logIndex): the log index on
 * EVM/TRON, the account index inside the transaction on Solana. `amount` is in token base units, never a ui amount.
 */
export interface ObservedTransfer {
  txHash: string;
  logIndex: number;
  block: BlockRef;
  token: TokenSymbol;
  tokenContract: string;
  from: string | null;
  to: string;
  amount: bigint;
}

/**
 * A transfer of a look-alike (a LookalikeContract: USDbC, USDC.e) to a watched address. Kept apart from
 * ObservedTransfer, whose `token` is a settlement token: the ledger records it as an unmatched deposit of an
 * unsupported token, never credited. Same uniqueness and chain order as ObservedTransfer.
 */
export interface UnsupportedTransfer extends Omit<ObservedTransfer, 'token'> {
  /** The look-alike's symbol as the network registry (or CHAIN_<NET>_<MODE>_LOOKALIKE_CONTRACTS) names it. */
  token: string;
  /** Why it is not the token (the registry's note). */
  note: string;
}

/** JSON-serialisable adapter state; the watcher stores it verbatim and never looks inside. */
export type CursorState = object;

/** The addresses (canonical form) the watcher wants transfers for. Adapters filter locally; RPC cost must not grow with it
 * except where a chain leaves no other way (Solana polls per token account and iterates `addresses()`). */
export interface WatchSet {
  /**
   * Adapters call this after reading the chain head and before matching. When it resolves, every address committed
   * before the head was read is present; as a payer can only pay an address after it was shown, no transfer in a
   * block at or below that head can be to an address missing from the set.
   */
  sync(): Promise<void>;
  has(address: string): boolean;
  addresses(): Iterable<string>;
  readonly size: number;
}

export interface PollResult {
  /**
   * Non-null after a reorg: every provisional transfer previously observed in a block with height > rollbackAbove is
   * no longer canonical and must be rolled back before `transfers` are applied. Never below `finalHeight` of an
   * earlier poll: a reorg below finality is thrown as DeepReorgError instead.
   */
  rollbackAbove: bigint | null;
  /** New observations, in chain order. May repeat observations already delivered (at-least-once). */
  transfers: ObservedTransfer[];
  /**
   * Transfers OUT of watched addresses (`from` in the watch set), in chain order, at-least-once like `transfers`, so
   * that movements the service did not make are journaled. Optional: families that do not report them leave it absent.
   */
  outgoing?: ObservedTransfer[];
  /**
   * Transfers of look-alike contracts TO watched addresses, in chain order, at-least-once like `transfers`; rolled
   * back by `rollbackAbove` like them. Absent on families that watch no look-alikes (TRON, Solana).
   */
  unsupported?: UnsupportedTransfer[];
  /** Transfers in blocks at or below this height are final (confirmation depth, `finalized` tag, or commitment). */
  finalHeight: bigint;
  /** The highest block whose transfers are all in `transfers` or earlier polls; its timestamp bounds what was seen. */
  processedTip: BlockRef;
  /** To persist in the same transaction as the effects of `transfers` and `rollbackAbove`. */
  cursor: CursorState;
  /** True when the cursor reached the head: the watcher may sleep a poll interval. */
  caughtUp: boolean;
  /**
   * Called once the poll's effects and `cursor` are committed. An adapter that keeps state between polls in memory
   * (Solana: which accounts' balances its history explains) keeps what this poll learned only then, so a poll whose
   * commit failed is repeated in full by the next one. Not called: the next poll repeats this one's work.
   */
  committed?: () => void;
}

export interface ChainHead {
  latest: bigint;
  /** Highest height considered final under the adapter's confirmation policy. */
  final: bigint;
}

/** Reading side: detection of incoming transfers. */
export interface TransferSource {
  /** Cursor for a watcher that has never run: starts at `startHeight` or at the current final height. */
  initialCursor(startHeight?: bigint): Promise<CursorState>;
  /** Next batch after `cursor`. Throws on RPC failure; nothing is half-applied because the caller persists atomically. */
  pollTransfers(cursor: CursorState, watch: WatchSet): Promise<PollResult>;
  getHead(): Promise<ChainHead>;
  /** Reads decimals on chain for every registry token; throws TokenRegistryMismatchError on any difference. */
  verifyTokens(): Promise<void>;
}

export class TokenRegistryMismatchError extends Error {}

/** A reorg replaced a block the adapter had already reported as final. Never handled automatically. */
export class DeepReorgError extends Error {}
