import type { ChainAdapter, KeyPath, SignedTransfer, TokenContract, TokenSymbol } from '../../../chains/types.js';
import type { Db } from '../../../src/db/database.js';

// What a chain family provides to run the shared adapter scenarios (scenarios.ts): a funded payer, a way to move the
// chain forward, and the family's own ways to lose or break a transaction. Addresses are canonical (as the adapter
// stores them) unless named otherwise; amounts are token base units.

export interface PaidTransfer {
  to: string;
  amount: bigint;
}

/** A transfer that reached a node and can be made to leave the chain again. */
export interface ForgettableTransfer {
  /** The transfer's id in the adapter's form (what deposits.tx_hash holds). */
  txHash: string;
  /** Takes the transfer out of the canonical chain (a longer branch without it, or a leader that lost it). */
  forget(): Promise<void>;
  /** The same signed bytes reach the chain again. */
  replay(): Promise<void>;
}

export interface ConformanceFixture {
  readonly adapter: ChainAdapter;
  readonly db: Db;
  readonly merchant: { id: string; account: number };
  /** Shapes of a canonical address and of a transaction id as the adapter reports them. */
  readonly addressPattern: RegExp;
  readonly txHashPattern: RegExp;
  /** Canonical address of the payer used by pay(). */
  readonly payer: string;
  /**
   * advance() steps after land() until a transfer is final under the adapter's confirmation policy: one step fewer
   * leaves it provisional.
   */
  readonly stepsToFinal: number;
  /** Another adapter of the same family and node, configured with `tokens` (for the registry check). */
  adapterWith(tokens: TokenContract[]): ChainAdapter;

  /** Registry `token` from the payer to every `transfers[i].to`, all in ONE transaction; its id in the adapter's form. */
  pay(token: TokenSymbol, transfers: PaidTransfer[]): Promise<string>;
  /** The same symbol and decimals at another contract or mint, to `to`. */
  payLookAlike(to: string, amount: bigint): Promise<void>;
  /** A registry-token transfer of more than the payer holds that still lands on chain, failed. */
  payFailing(token: TokenSymbol, to: string, amount: bigint): Promise<void>;
  /** What was sent becomes visible at the level detection reads (EVM/TRON: mined on send; Solana: `confirmed`). */
  land(): Promise<void>;
  /** Moves the chain forward by `steps` blocks or slots. */
  advance(steps: number): Promise<void>;
  /**
   * A chain that can reorg locally: the transfer is mined and seen, then replaced by a longer branch without it.
   * A chain that cannot: the leader loses the transaction before it lands. Exactly one of the two is present.
   */
  reorg?(token: TokenSymbol, to: string, amount: bigint): Promise<ForgettableTransfer>;
  drop?(token: TokenSymbol, to: string, amount: bigint): Promise<ForgettableTransfer>;

  /** A hot wallet of the merchant's account, funded with the native coin and every registry token. */
  readonly hotWallet: { key: KeyPath; address: string };
  /** A fresh payout destination that never received anything, in the form a refund request carries. */
  newDestination(): string;
  tokenBalance(token: TokenSymbol, owner: string): Promise<bigint>;
  setNativeBalance(address: string, amount: bigint): Promise<void>;
  /**
   * The native coin `address` holds now, where the family can read it: then a payout's reported fee must equal what
   * its sender lost (an L1 data fee included on rollups).
   */
  nativeBalance?(address: string): Promise<bigint>;
  /** Broadcasts `signed`, a transfer of `token`, so that it lands on chain and fails there (nothing moves). */
  landFailing(signed: SignedTransfer, token: TokenSymbol): Promise<void>;
  /** Makes `signed`, never broadcast, unable to ever land (its nonce used by another transaction, or it expired). */
  outlive(signed: SignedTransfer): Promise<void>;

  close(): Promise<void>;
}
