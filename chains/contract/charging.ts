import type { TokenSymbol } from '../vocabulary.js';
import type { BlockRef } from './objects.js';
import type { TokenTransferRequest, TxOutcome, UnsignedTransfer } from './sending.js';

// Charging a customer's wallet authorization (subscriptions): observed approvals and allowance charges.

/** An ERC-20/TRC-20 `Approval(owner, spender, value)` observed in a block (a customer's spending authorization). */
export interface ObservedApproval {
  txHash: string;
  logIndex: number;
  blockHeight: bigint;
  token: TokenSymbol;
  tokenContract: string;
  owner: string;
  spender: string;
  value: bigint;
}

/** The token movement a charge made: the Transfer logs from the owner to the destination (first log's index, their sum). */
export interface ChargeTransfer {
  logIndex: number;
  /** What the destination received: the sum of every Transfer from the owner to it (after any fee the token took). */
  amount: bigint;
  tokenContract: string;
  block: BlockRef;
  /** Native base units the sender (the charger, fee payer) locked in accounts the transaction created (Solana: the
   * settlement address's token account's rent, when the charge created it); absent or 0 elsewhere. */
  rentPaid?: bigint;
}

/**
 * Allowance charging (subscriptions): read allowances, find Approval logs to the service's chargers, and pull funds
 * with `transferFrom`, sent and paid for by the charger. Families that can do it implement this next to ChainAdapter.
 */
export interface AllowanceCharger<Body = unknown> {
  /** `at: 'final'`: as of the chain's final height or commitment (what authorizations are decided on). */
  getAllowance(token: TokenSymbol, owner: string, spender: string, at?: 'latest' | 'final'): Promise<bigint>;
  getTokenBalance(token: TokenSymbol, owner: string): Promise<bigint>;
  /**
   * Log families (EVM, TRON): Approval logs in blocks [fromHeight, toHeight] whose spender is one of `spenders`
   * (canonical addresses). Exactly one of `scanApprovals` and `readApproval` is implemented.
   */
  scanApprovals?(fromHeight: bigint, toHeight: bigint, spenders: readonly string[]): Promise<ObservedApproval[]>;
  /**
   * State families (Solana, whose SPL `Approve` leaves no log to filter by spender): the owner's current authorization
   * of `spender` for `token`, read at the chain's final commitment, as an observation (txHash: the approving
   * transaction when it can be found, logIndex 0); null when `spender` is not authorized.
   */
  readApproval?(token: TokenSymbol, owner: string, spender: string): Promise<ObservedApproval | null>;
  /**
   * State families: who the owners' token accounts currently authorize, read in batches at the final commitment
   * (one answer per item, in order; null when the account does not exist). For noticing a replaced authorization.
   */
  readAuthorizations?(
    items: ReadonlyArray<{ token: TokenSymbol; owner: string }>,
  ): Promise<Array<{ spender: string | null; value: bigint } | null>>;
  /**
   * An unsigned `approve(spender, amount)` for the customer's wallet to sign and send, for wallets that sign prepared
   * transactions (TronLink, Solana Wallet Standard). Absent where the page builds the call itself (EVM, EIP-1193).
   */
  buildApprovalForWallet?(token: TokenSymbol, owner: string, spender: string, amount: bigint): Promise<WalletTransaction>;
  /**
   * `request.from` is the charger; the tokens move from `owner` to `request.to`. May be built before the nonce is
   * known (any placeholder nonce) and given its real nonce with `withNonce` under the nonce lock.
   */
  buildTokenTransferFrom(request: TokenTransferRequest, owner: string): Promise<UnsignedTransfer<Body>>;
  /** Outcome of a charge: success needs a Transfer log from `owner`. */
  getTransferFromOutcome(hash: string, owner: string): Promise<TxOutcome>;
  /** The Transfer from `owner` to `to` in a succeeded charge, or null. */
  findChargeTransfer(hash: string, owner: string, to: string): Promise<ChargeTransfer | null>;
}

/**
 * An unsigned transaction prepared for a customer's wallet:
 * - tron: java-tron's transaction JSON (`txID`, `raw_data`, `raw_data_hex`), as TronLink's `tronWeb.trx.sign` takes it;
 * - solana: a legacy transaction serialized without signatures (base64), fee payer the owner, recent blockhash set,
 *   as Wallet Standard's `solana:signAndSendTransaction` takes it (bytes).
 */
export type WalletTransaction = { kind: 'tron'; transaction: Record<string, unknown> } | { kind: 'solana'; transaction: string };
