import type { TokenSymbol } from '../vocabulary.js';
import type { KeyDeriver, KeyPath } from './keys.js';
import type { UnsignedTransfer } from './sending.js';

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
  /**
   * Every destination the sources' merchant may be swept to on this network (its refunds hot wallet and, when set, its
   * treasury), `destination` among them. `evm-7702-batch`: the delegate the deposit keys authorize is bound to exactly
   * these (docs/treasury-evm-7702.md), so a stolen gas-station key cannot send their tokens anywhere else. Absent:
   * `destination` alone.
   */
  destinations?: string[];
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
  /**
   * The operator wallet at `slot` under OPERATOR_ACCOUNT: OPERATOR_SLOT.resources, or a gas station's slot (generation 0
   * at OPERATOR_SLOT.gasStation; after rotations the ledger's current generation, docs/treasury.md).
   */
  deriveOperatorWallet(keys: KeyDeriver, slot: number): Promise<Wallet>;
  /**
   * Rotation of the gas station (docs/treasury.md, "Rotating the gas station"): a plain native transfer of everything
   * `from` holds, minus this transaction's own highest fee (at `feeBumpPercent` more), to `to`, at `nonce` (nonce
   * families; null elsewhere). null when what would be left after the fee is not worth a transaction.
   */
  buildNativeDrain?(from: Wallet, to: string, nonce: bigint | null, feeBumpPercent: number): Promise<UnsignedTransfer | null>;
  /** Native base units the succeeded transaction `hash` moved to `to`; null when not found or not succeeded. */
  readNativeDrain?(hash: string, to: string): Promise<bigint | null>;
}
