import type { Mode } from '../../db/schema.js';
import type { NetworkId } from '../../../chains/vocabulary.js';
import type { BurntFee } from '../journal/entries.js';

// What the outbound engine (src/outbound/) needs from the ledger to drive one kind of outbound transfer (a refund
// payout, a subscription charge, ...) through persist-before-broadcast. Each kind implements it over its own tables;
// the engine never writes SQL. Kinds whose attempts have the common table shape (refunds, sweep steps, deposit setups)
// are served by the one attempt store, src/ledger/outbound/attempt-store.ts, which writes the guard below once. Invariants every
// implementation keeps:
// - `sign` runs ONE transaction that locks the business row, re-checks the attempts as the caller saw them, and
//   commits the signed bytes (and the nonce it advanced) before the engine may broadcast them;
// - an attempt, once stored, only ever leaves `live` (signed or broadcast) for a settled state, never back.

/** One signed transaction of a job, as stored before its first broadcast. */
export interface OutboundAttempt {
  id: bigint;
  txHash: string;
  /** Account nonce (nonce families); null where the chain has none (TRON, Solana). */
  nonce: bigint | null;
  /** The signed bytes and what is needed to re-offer them (chains' SignedTransfer, stored as JSON strings). */
  signed: Record<string, string | null>;
  feeBumpPercent: number;
  createdAt: Date;
  /** False until a node accepted the bytes or reported them pending at least once. */
  broadcast: boolean;
}

/** A hot wallet's nonce row: the serial point of every transaction it signs. */
export interface NonceRef {
  network: NetworkId;
  mode: Mode;
  address: string;
}

/** What `takeNonce` answers: the nonce handed out, or the chain ahead of the stored one (nothing handed out). */
export type TakenNonce = { kind: 'taken'; nonce: bigint } | { kind: 'chain_ahead'; stored: bigint };

/** The calls available inside `OutboundStore.sign`'s transaction, after the job row is locked and re-checked. */
export interface SigningTransaction {
  /**
   * Hands out the wallet's stored next nonce and advances it (used + 1), its row locked until commit; the row is created
   * from `chainNonce` the first time (or from 0, by the store's choice). When `chainNonce` is ahead of the stored nonce
   * (transactions the ledger does not know) nothing is handed out: the row notes it (for the metric and the CLI, until
   * an operator accepts the chain's nonce) and the answer is `chain_ahead` with the stored nonce.
   */
  takeNonce(ref: NonceRef, chainNonce: bigint): Promise<TakenNonce>;
  /** Stores the signed bytes as a new live attempt (and whatever the kind notes on its business row). */
  record(a: {
    signed: Record<string, string | null>;
    txHash: string;
    sender: string;
    nonce: bigint | null;
    feeBumpPercent: number;
  }): Promise<OutboundAttempt>;
}

export type ClaimResult<J> = { kind: 'job'; job: J } | { kind: 'done'; status: string };

/**
 * The restore guard of wallets without account nonces (src/ledger/outbound/wallet-history.ts): which transactions the
 * ledger knows, the note of those it does not, and what still holds a wallet's sends.
 */
export interface WalletHistoryLedger {
  /** The hashes among `hashes` that some attempt of any kind (or an operator's accept) names on that network and mode. */
  known(chain: { network: NetworkId; mode: Mode }, hashes: string[]): Promise<Set<string>>;
  /** Notes transactions of the wallet the ledger does not know (each once). */
  note(w: NonceRef, txs: ReadonlyArray<{ hash: string; timeMs: number | null; failed: boolean }>): Promise<void>;
  /** The wallet's noted transactions neither accepted nor known since: while any, nothing is signed from it. */
  held(w: NonceRef): Promise<string[]>;
}

export interface OutboundStore<J> {
  /** The restore guard's ledger side (every kind shares the one implementation: wallet-history.ts). */
  wallets: WalletHistoryLedger;
  /** Takes the job up for processing; `done` when it is settled, canceled or missing. */
  claim(id: string): Promise<ClaimResult<J>>;
  /** The attempts that may still land (signed or broadcast), oldest first. */
  liveAttempts(job: J): Promise<OutboundAttempt[]>;
  /**
   * Runs `fn` in one transaction holding the job's row lock, if the attempts are still as the caller saw them: none
   * live for a first attempt, `replacing` still the newest live one for a replacement. 'raced' when another run got
   * there first; 'closed' when the job can no longer be signed for (canceled or settled meanwhile).
   */
  sign<R>(job: J, replacing: OutboundAttempt | null, fn: (trx: SigningTransaction) => Promise<R>): Promise<R | 'raced' | 'closed'>;
  /** A node has the bytes (accepted, or reported pending). */
  markBroadcast(job: J, a: OutboundAttempt): Promise<void>;
  /** The bytes provably can never land (expired, or their nonce went to another transaction). */
  dropAttempt(job: J, a: OutboundAttempt, reason: string): Promise<void>;
  /**
   * For bytes whose first offer the network refused (no gas, ...; no node ever took them): gives their nonce back and
   * drops them when no later nonce was handed out, so the next step signs afresh and its pre-flight names the reason.
   * False when the kind keeps offering them.
   */
  releaseNonceIfLast(job: J, ref: NonceRef, a: OutboundAttempt): Promise<boolean>;
  /** Every attempt proven dead: the job may be signed afresh (after its pre-flight). False when raced. */
  reopen(job: J): Promise<boolean>;
  /**
   * Journals the fee burnt by a landed transaction of the job that failed (reverted, or moved nothing to the
   * destination), linked to the job's business object (journal.ts journalBurntFee: idempotent). Called before `fail`.
   */
  recordBurntFee(job: J, burnt: BurntFee): Promise<void>;
}
