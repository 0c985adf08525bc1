import type { NetworkId, TokenSymbol } from '../vocabulary.js';
import type { AddressBalances } from './balances.js';
import type { KeyDeriver, KeyPath, TxSigner } from './keys.js';
import type { BlockRef } from './objects.js';

// The sending side (refund payouts, subscription charges, sweeps): build, sign through the signer, persist, broadcast,
// and judge what landed.

export interface TokenTransferRequest {
  from: { key: KeyPath; address: string };
  to: string;
  token: TokenSymbol;
  amount: bigint;
  /** Account nonce (EVM): assigned by the payout engine, gapless per hot wallet. Ignored by families without nonces. */
  nonce?: bigint;
  /** Fee increase over the network's current estimate, in percent (replacement of a stuck transaction). */
  feeBumpPercent?: number;
}

/** Family-specific unsigned transaction; only the adapter that built it reads `body` (its own `Body` type). */
export interface UnsignedTransfer<Body = unknown> {
  network: NetworkId;
  request: TokenTransferRequest;
  body: Body;
}

/** Everything needed to re-broadcast the exact same bytes after a crash. Strings only: stored as JSON. */
export interface SignedTransfer {
  network: NetworkId;
  /** Transaction hash, TRON txID or Solana signature: what `getTransactionOutcome` takes. */
  hash: string;
  /** Serialised signed transaction (0x-hex for EVM/TRON, base64 for Solana). */
  raw: string;
  sender: string;
  nonce: string | null;
  /** After this height (Solana lastValidBlockHeight) or time (TRON expiration, ms) the bytes can never land. */
  validUntilHeight: string | null;
  validUntilTimeMs: string | null;
}

export type BroadcastResult =
  | { status: 'accepted' }
  | { status: 'already_known' }
  | { status: 'rejected'; reason: SendFailureReason; detail: string };

export type SendFailureReason =
  | 'insufficient_gas'
  | 'insufficient_token_balance'
  | 'nonce_too_low'
  | 'underpriced'
  | 'expired'
  | 'invalid'
  | 'simulation_reverted'
  | 'other';

export type TxFailureReason = 'reverted' | 'out_of_energy' | 'no_transfer_event' | 'expired';

/**
 * Why a token contract refused a transfer, read from its state after a revert (or a refused simulation): `paused()`,
 * Tether's `isBlackListed(address)`, FiatToken's `isBlacklisted(address)`, where the token has them. `sender` is the
 * holder whose tokens move (the hot wallet, or the customer of a charge); `spender` the charger sending a transferFrom.
 */
export type TokenRefusal = 'token_paused' | 'sender_blacklisted' | 'recipient_blacklisted' | 'spender_blacklisted';

export type TxOutcome =
  | { status: 'unknown' }
  | { status: 'pending' }
  | { status: 'succeeded'; block: BlockRef; confirmations: bigint; final: boolean; fee: bigint }
  | {
      status: 'failed';
      block: BlockRef;
      confirmations: bigint;
      final: boolean;
      reason: TxFailureReason;
      detail: string;
      refusal?: TokenRefusal;
      /** Native base units the sender burnt on the failed transaction (gas used, TRX burnt, Solana fee). */
      fee?: bigint;
    };

/**
 * What a landed transaction moved of one registry token out of `from`, read from its Transfer logs (EVM, TRON) or token
 * balances (Solana): `delivered` reached the intended recipient, `elsewhere` went to any other address (a transfer fee
 * taken by the issuer, or a misdirected transfer). Amounts in base units.
 */
export interface Delivery {
  delivered: bigint;
  elsewhere: bigint;
  /** Native base units the sender locked in accounts the transaction created (Solana: the recipient's token account's rent). */
  rentPaid?: bigint;
}

/** Reserved hot-wallet slots of a merchant's BIP44 account (change branch 1). */
export const HOT_WALLET_SLOT = { refunds: 0, charges: 1 } as const;

/** Sending side, used by refund payouts and subscription charges: build, sign (through the signer), persist, broadcast. */
export interface TransferSender<Body = unknown> {
  /** Key and address of a reserved hot wallet of `account` (HOT_WALLET_SLOT). */
  deriveHotWallet(keys: KeyDeriver, account: number, slot: number): Promise<{ key: KeyPath; address: string }>;
  /** The next account nonce of `address` counting pending transactions; null for families without account nonces. */
  getAccountNonce(address: string): Promise<bigint | null>;
  /**
   * The same unsigned transfer at another account nonce: a transfer may be built (gas estimate, fees, simulation)
   * before its nonce is assigned under the nonce lock. Families without account nonces return it unchanged.
   */
  withNonce(unsigned: UnsignedTransfer<Body>, nonce: bigint): UnsignedTransfer<Body>;
  /** True only once `signed` provably can never land (expired blockhash or expiration); re-signing is safe only then. */
  isExpired(signed: SignedTransfer): Promise<boolean>;
  getBalances(address: string): Promise<AddressBalances>;
  /**
   * A transaction, paid by `feePayer`, that makes a deposit address able to receive `token` (Solana: the deposit
   * owner's associated token account, created idempotently). Absent on families where any address can receive.
   */
  buildDepositSetup?(
    feePayer: { key: KeyPath; address: string },
    depositAddress: string,
    token: TokenSymbol,
  ): Promise<UnsignedTransfer<Body>>;
  /** With buildDepositSetup: false once the deposit address can already receive `token` (nothing left to prepare). */
  depositSetupNeeded?(depositAddress: string, token: TokenSymbol): Promise<boolean>;
  /**
   * Native base units a landed transaction locked in accounts it created (Solana rent), paid by its fee payer; null
   * when the transaction is not found (yet). Absent on families without rent.
   */
  readRentPaid?(hash: string): Promise<bigint | null>;
  buildTokenTransfer(request: TokenTransferRequest): Promise<UnsignedTransfer<Body>>;
  signTransfer(unsigned: UnsignedTransfer<Body>, signer: TxSigner): Promise<SignedTransfer>;
  /** Idempotent: re-broadcasting bytes the network already has answers `already_known`. */
  broadcast(signed: SignedTransfer): Promise<BroadcastResult>;
  getTransactionOutcome(hash: string): Promise<TxOutcome>;
  /**
   * What the succeeded transaction `hash` moved of `token` from `from`, split by whether it reached `to`; null when the
   * transaction is not found or did not succeed. The only measure of a completed payout: never the requested amount.
   */
  readDelivery(hash: string, token: TokenSymbol, from: string, to: string): Promise<Delivery | null>;
  /**
   * The amount to send so that `to` receives `net`, for a token that announces a fee on transfers (Tether's
   * `basisPointsRate` and `maximumFee`): the smallest gross whose net is `net`. Absent, or `net`, for tokens without.
   */
  grossForNet?(token: TokenSymbol, net: bigint): Promise<bigint>;
}

/** Building or broadcasting a transfer was refused before anything reached the chain (safe to fail the payout). */
export class TransferRejectedError extends Error {
  constructor(
    readonly reason: SendFailureReason,
    detail: string,
    readonly refusal?: TokenRefusal,
    /** Set when an operator's wallet (a gas station) lacks the native coin the transaction needs: fee money to add. */
    readonly shortfall?: WalletShortfall,
  ) {
    super(detail);
  }
}

/** A wallet holding less native coin than a transaction needs: its canonical address, balance and need (base units). */
export interface WalletShortfall {
  address: string;
  balance: bigint;
  needed: bigint;
}

/** A transaction the wallet signed that the ledger does not know, as the chain shows it. */
export interface OutgoingTransaction {
  /** In the form `SignedTransfer.hash` takes (TRON txID, Solana signature). */
  hash: string;
  /** When its block was made (ms since the epoch); null when the node does not say. */
  timeMs: number | null;
  /** Landed and failed (nothing moved but the fee). */
  failed: boolean;
}

/**
 * The wallet's recent outgoing transactions, for families without account nonces (TRON, Solana): what the outbound
 * engine compares with the ledger's attempts before a wallet's first send after a start (docs/outbound.md,
 * "Transactions the ledger does not know"). EVM needs none: the chain's nonce says it.
 */
export interface OutgoingHistory {
  /**
   * Transactions signed by `address` that landed at or after `sinceMs`, newest first, leaving out those `known`
   * names (it answers the subset of the hashes it is given that the ledger knows). `truncated` when the listing
   * stopped at its page limit before reaching `sinceMs`: older ones were not looked at.
   */
  unknownOutgoing(
    address: string,
    sinceMs: number,
    known: (hashes: string[]) => Promise<Set<string>>,
  ): Promise<{ found: OutgoingTransaction[]; truncated: boolean }>;
}
