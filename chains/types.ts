// The chain adapter contract shared by every network family (EVM, TRON, Solana).
//
// Shape: "observations since an opaque cursor, provisional until final, plus rollback of what stopped being canonical".
// An adapter turns RPC answers into typed transfers, block references and transaction outcomes. It never touches the
// database and knows nothing of sessions: the watcher persists the cursor together with the effects of each poll, and
// the ledger decides what a transfer means.

import type { Mode, NetworkId, TokenSymbol } from './vocabulary.js';
import type { AllowanceCharger } from './contract/charging.js';
import type { BalanceReader, FinalStateReader } from './contract/balances.js';
import type { KeyDeriver } from './contract/keys.js';
import type { LookalikeContract, TokenContract, TransferSource } from './contract/objects.js';
import type { OutgoingHistory, TransferSender } from './contract/sending.js';
import type { Sweeper } from './contract/sweeping.js';

export type { Mode, NetworkId, TokenSymbol };
export { NETWORK_IDS, TOKEN_SYMBOLS } from './vocabulary.js';
export type ChainFamily = 'evm' | 'tron' | 'solana';

export * from './contract/objects.js';
export * from './contract/keys.js';
export * from './contract/sending.js';
export * from './contract/balances.js';
export * from './contract/charging.js';
export * from './contract/sweeping.js';

/** `Body`: the family's unsigned-transaction body; code outside the family sees `unknown` and only passes it back. */
export interface ChainAdapter<Body = unknown> extends TransferSource, TransferSender<Body> {
  readonly network: NetworkId;
  readonly family: ChainFamily;
  readonly mode: Mode;
  readonly tokens: readonly TokenContract[];
  /** Look-alikes whose transfers to watched addresses the adapter reports as `unsupported` (canonical addresses); absent: none. */
  readonly lookalikes?: readonly LookalikeContract[];
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

export function isFinalStateReader(a: ChainAdapter): a is ChainAdapter & FinalStateReader {
  return typeof (a as Partial<FinalStateReader>).finalStateBalances === 'function';
}

export function isBalanceReader(a: ChainAdapter): a is ChainAdapter & BalanceReader {
  return typeof (a as Partial<BalanceReader>).balancesAt === 'function';
}

export function isAllowanceCharger(a: ChainAdapter): a is ChainAdapter & AllowanceCharger {
  const c = a as Partial<AllowanceCharger> & { readonly chargesAvailable?: boolean };
  // An adapter of a charging family may still be configured without what charging needs (TRON without a wallet API).
  return typeof c.buildTokenTransferFrom === 'function' && c.chargesAvailable !== false;
}

/** TRON and Solana: the wallet's recent outgoing transactions (the restore guard of families without nonces). */
export function hasOutgoingHistory(a: ChainAdapter): a is ChainAdapter & OutgoingHistory {
  return typeof (a as Partial<OutgoingHistory>).unknownOutgoing === 'function';
}

export function isSweeper(a: ChainAdapter): a is ChainAdapter & Sweeper {
  return typeof (a as Partial<Sweeper>).sweepMethods === 'function';
}
