// The chain adapter contract shared by every network family (EVM, TRON, Solana).
//
// Shape: "observations since an opaque cursor, provisional until final, plus rollback of what stopped being canonical".
// An adapter turns RPC answers into typed transfers, block references and transaction outcomes. It never touches the
// database and knows nothing of sessions: the watcher persists the cursor together with the effects of each poll, and
// the ledger decides what a transfer means.

import type { Mode, NetworkId, TokenSymbol } from './vocabulary.js';

export type { Mode, NetworkId, TokenSymbol };
export { NETWORK_IDS, TOKEN_SYMBOLS } from './vocabulary.js';
export type ChainFamily = 'evm' | 'tron' | 'solana';

/** One token contract (EVM/TRON) or mint (Solana) as the registry knows it. `address` is canonical (see normalizeAddress). */
export interface TokenContract {
  symbol: TokenSymbol;
  address: string;
  decimals: number;
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

/** A BIP32/SLIP-0010 key location: the signer holds the secret, chains only name it. */
export interface KeyPath {
  curve: 'secp256k1' | 'ed25519';
  /** e.g. m/44'/60'/3'/0/17 */
  path: string;
}

/** Public keys by path. Backed by a mnemonic or, watch-only, by account-level xpubs (secp256k1 non-hardened tails). */
export interface KeyDeriver {
  /** secp256k1: 33-byte compressed key; ed25519: 32-byte key. */
  publicKey(key: KeyPath): Promise<Uint8Array>;
}

export interface Secp256k1Signature {
  r: string;
  s: string;
  yParity: 0 | 1;
}

/** Signing by path; private keys never leave the signer. */
export interface TxSigner extends KeyDeriver {
  signSecp256k1Digest(key: KeyPath, digest: Uint8Array): Promise<Secp256k1Signature>;
  signEd25519(key: KeyPath, message: Uint8Array): Promise<Uint8Array>;
}

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

export function isFinalStateReader(a: ChainAdapter): a is ChainAdapter & FinalStateReader {
  return typeof (a as Partial<FinalStateReader>).finalStateBalances === 'function';
}

export function isBalanceReader(a: ChainAdapter): a is ChainAdapter & BalanceReader {
  return typeof (a as Partial<BalanceReader>).balancesAt === 'function';
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

/** `Body`: the family's unsigned-transaction body; code outside the family sees `unknown` and only passes it back. */
export interface ChainAdapter<Body = unknown> extends TransferSource, TransferSender<Body> {
  readonly network: NetworkId;
  readonly family: ChainFamily;
  readonly mode: Mode;
  readonly tokens: readonly TokenContract[];
  /** Canonical form used for storage and matching, or null when `text` is not an address of this network. */
  normalizeAddress(text: string): string | null;
  /** The form shown to payers and merchants (EIP-55 checksum, base58 `T...`, base58 Solana). */
  displayAddress(canonical: string): string;
  /** Fee resources beyond the native balance, for the operator (TRON: energy and bandwidth); absent elsewhere. */
  describeFeeResources?(address: string): Promise<Record<string, unknown>>;
  /** Deposit address (canonical) of `index` under a BIP44 `account`. Throws on an index outside BIP32's range. */
  deriveDepositAddress(keys: KeyDeriver, account: number, index: bigint): Promise<string>;
  /** The wallet link and QR content the hosted page offers for paying `amountBase` of `token` to a deposit address. */
  paymentLink(request: PaymentLinkRequest): Promise<WalletLink>;
}

export interface PaymentLinkRequest {
  token: TokenContract;
  /** Canonical deposit address (as stored). */
  depositAddress: string;
  /** Token base units; links are built from this bigint only. */
  amountBase: bigint;
  /** The merchant's name, where the link format has a label. */
  label: string;
}

export interface WalletLink {
  /** The link the "open in wallet" button follows. */
  href: string;
  /** What the QR code encodes (the link itself, except on TRON). */
  qr: string;
}

export class TokenRegistryMismatchError extends Error {}

/** A reorg replaced a block the adapter had already reported as final. Never handled automatically. */
export class DeepReorgError extends Error {}

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

export function isAllowanceCharger(a: ChainAdapter): a is ChainAdapter & AllowanceCharger {
  const c = a as Partial<AllowanceCharger> & { readonly chargesAvailable?: boolean };
  // An adapter of a charging family may still be configured without what charging needs (TRON without a wallet API).
  return typeof c.buildTokenTransferFrom === 'function' && c.chargesAvailable !== false;
}

// ---------------------------------------------------------------------------------------------------------------------
// Sweeping (treasury): moving what deposit addresses hold to the merchant's hot wallet or treasury. A chain family
// offers one or more sweep METHODS (docs/treasury.md); the treasury layer (src/treasury/) picks one per batch, persists
// its steps and drives each step, one transaction, through the outbound engine. Chains only plan, build, and read.

/**
 * The deployment's own wallets (not a merchant's): BIP44 account 0, which no merchant gets (merchant accounts are a
 * serial from 1), change branch 1, these slots. The gas station pays sweep fees on EVM and TRON and is the only caller
 * the EIP-7702 sweep delegate accepts; on Solana it is the fee payer and receives the rent of closed deposit accounts.
 * `resources` (TRON) holds the operator's staked TRX and delegates energy.
 */
export const OPERATOR_ACCOUNT = 0;
export const OPERATOR_SLOT = { gasStation: 0, resources: 1 } as const;

export type SweepMethod = 'evm-7702-batch' | 'evm-gas-topup' | 'tron-energy-delegation' | 'tron-trx-topup' | 'solana-fee-payer';

export interface Wallet {
  key: KeyPath;
  address: string;
}

/** One deposit address to empty of the request's token: its key, and the amount (base units) decided by the planner. */
export interface SweepSource extends Wallet {
  amount: bigint;
}

/** What to sweep: one token on one network, from several deposit addresses to one destination. JSON-safe via the store. */
export interface SweepRequest {
  token: TokenSymbol;
  sources: SweepSource[];
  /** Canonical address of the hot wallet or treasury receiving the tokens. */
  destination: string;
  /** Pays fees: EVM gas station (sender of the 7702 batch and of gas top-ups), TRON TRX funder, Solana fee payer. */
  gasStation: Wallet;
  /** TRON: the staked account delegating energy (OPERATOR_SLOT.resources). */
  resources?: Wallet;
}

export type SweepStepPurpose =
  /** One-time: deploy what a method needs (the EIP-7702 delegate, through the deterministic CREATE2 deployer). */
  | 'deploy'
  /** Native coin to a deposit address: EVM gas, TRON TRX for fees (and account activation). */
  | 'fund'
  /** TRON: activate an account (a tiny TRX transfer creates it) before resources can be delegated to it. */
  | 'activate'
  /** TRON: delegate energy from the resources account to a deposit address. */
  | 'delegate'
  /** The token transfer from one deposit address (signed by it). */
  | 'transfer'
  /** One transaction moving the token out of many deposit addresses (7702 batch, Solana multi-signer). */
  | 'batch'
  /** Native coin left on a deposit address after its transfer, back to the gas station (only when worth it). */
  | 'reclaim'
  /** TRON: take the delegated energy back. */
  | 'undelegate'
  /** Solana: close the deposit token accounts the batches emptied (those still empty then), rent to the fee payer. */
  | 'close';

/**
 * One transaction of a sweep. Steps of the same `group` are independent; group n+1 starts only once every step of group
 * n is settled (succeeded and final, or skipped). JSON-safe: bigints travel as decimal strings in `params`.
 */
export interface SweepStep {
  group: number;
  purpose: SweepStepPurpose;
  /** The sending wallet (its nonce row, on nonce families). */
  from: Wallet;
  /** Recipient of the transaction's value or of its tokens (a deposit address, the destination, a contract). */
  to: string;
  /** Deposit addresses (canonical) this step moves tokens out of ('transfer', 'batch'); [] otherwise. */
  sources: string[];
  /** Native base units the step sends to `to` (fund, activate, reclaim: an upper bound; builders may send less). */
  value: bigint;
  /** Chain-specific parameters as strings (energy to delegate, contract address, salt, ...). */
  params: Record<string, string>;
  /** Estimated fee of this step in native base units (what the fee policy weighs). */
  estimatedFee: bigint;
}

export interface SweepPlan {
  method: SweepMethod;
  steps: SweepStep[];
  /**
   * Native base units the whole sweep is expected to cost: fees burnt plus native value that will not come back
   * (activation fees, dust a reclaim is not worth). The policy compares this, priced, with the amount swept.
   */
  estimatedCost: bigint;
  /**
   * Sources this method cannot sweep now, and why (e.g. the token refuses the address); the rest are in `steps`.
   * `waitsFor`: skipped because an operator wallet lacks the native coin: that wallet and what this source needs of it.
   */
  skipped: Array<{ address: string; reason: string; waitsFor?: { wallet: string; amount: bigint } }>;
}

/** What a succeeded step moved, read from the landed transaction. */
export interface SweepStepReceipt {
  /** Token base units that left each source address and reached the request's destination. */
  swept: Array<{ source: string; amount: bigint }>;
  /** Token base units that left the sources for any other address (a token fee): journaled, never hidden. */
  elsewhere: bigint;
  /** Native base units that reached `step.to` (fund, activate, reclaim); Solana 'close' (and 'batch' steps planned
   * before closes had their own step): the rent lamports the closed deposit token accounts returned to the fee payer. */
  nativeMoved: bigint;
  /** Native base units the transaction burnt as fee (TRON: TRX burnt for energy/bandwidth not covered). */
  fee: bigint;
  /** TRON: energy delegated ('delegate') or released ('undelegate'), in energy units; 0 elsewhere. */
  energy: bigint;
  /** Solana: lamports the fee payer locked as rent in an account the step created (the destination's token account). */
  rentPaid?: bigint;
}

/** One sweep method of a family: planning (read-only), building a step's transaction, reading a landed step. */
export interface SweepMethodImpl<Body = unknown> {
  readonly method: SweepMethod;
  /** Whether this chain and deployment can use the method now (a probe, e.g. EIP-7702 support); why not otherwise. */
  available(): Promise<{ ok: true } | { ok: false; reason: string }>;
  plan(request: SweepRequest): Promise<SweepPlan>;
  /**
   * The unsigned transaction of `step` at `nonce` (nonce families; null elsewhere) with `feeBumpPercent` more fee.
   * May read chain state (the leftover gas a reclaim returns, whether an account is already active); null when the
   * step has become unnecessary (nothing worth reclaiming): the driver settles it as skipped. Signed by the family's
   * `signTransfer`, which signs with every key the body needs (7702 authorizations, Solana deposit owners).
   */
  build(request: SweepRequest, step: SweepStep, nonce: bigint | null, feeBumpPercent: number): Promise<UnsignedTransfer<Body> | null>;
  /** What the succeeded transaction `hash` of `step` moved; null when not found or not succeeded. */
  read(hash: string, request: SweepRequest, step: SweepStep): Promise<SweepStepReceipt | null>;
}

/** Families that can sweep expose their methods, preferred (cheapest) first. */
export interface Sweeper<Body = unknown> {
  sweepMethods(): ReadonlyArray<SweepMethodImpl<Body>>;
  /** Token balances of `addresses` at the chain's final height or commitment, batched, in order. */
  finalTokenBalances(token: TokenSymbol, addresses: readonly string[]): Promise<bigint[]>;
  /** The operator wallet at `slot` (OPERATOR_SLOT) under OPERATOR_ACCOUNT. */
  deriveOperatorWallet(keys: KeyDeriver, slot: number): Promise<Wallet>;
}

export function isSweeper(a: ChainAdapter): a is ChainAdapter & Sweeper {
  return typeof (a as Partial<Sweeper>).sweepMethods === 'function';
}
