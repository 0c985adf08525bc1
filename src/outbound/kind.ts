import type {
  BlockRef,
  ChainAdapter,
  KeyPath,
  SendFailureReason,
  TokenRefusal,
  TxFailureReason,
  TxOutcome,
  TxSigner,
  UnsignedTransfer,
  WalletShortfall,
} from '../../chains/types.js';
import type { Mode, NetworkId } from '../../chains/vocabulary.js';
import type { OutboundAttempt, OutboundStore } from '../ledger/outbound/outbound-store.js';
import type { Logger } from '../logger.js';
import type { SigningIntent } from '../signer/intent.js';
import type { FailpointAction } from './failpoints.js';

// The contract between the outbound engine and one kind of outbound transfer. The engine owns the state machine
// (see engine.ts); a kind says only what differs: which adapter and wallet, how the transfer is built, the
// pre-flight checks, how a landed transaction is read, and what completion or failure means for its business row.

/** `shortfall`: the step waits for fee money an operator must add to that wallet (nothing else can unblock it). */
export type StepResult = { kind: 'done'; status: string } | { kind: 'wait'; ms: number; shortfall?: WalletShortfall };

/** Replacement of a transaction stuck in the mempool, shared by every outbound kind. */
export interface StuckReplacement {
  /** A pending transaction older than this is replaced at the same nonce with a higher fee. */
  stuckAfterMs: number;
  /** Fee increase per replacement, in percent (nodes require at least 10). */
  feeBumpPercent: number;
}

export interface OutboundDeps extends StuckReplacement {
  /** Signs outbound transfers; null in a deployment without a key. */
  signer: TxSigner | null;
  /** How long to wait between looks at a transaction in flight. */
  pollMs: number;
  /** TRON, Solana: how far back the first look at a wallet's outgoing transactions reads after a start
   * (OUTBOUND_WALLET_LOOKBACK_HOURS; default 72 h; src/outbound/wallet-history-guard.ts). */
  walletLookbackMs?: number;
  log?: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** Crash injection; the default SIGKILLs the process at the points SP_FAILPOINTS names. */
  failpoint?: FailpointAction;
}

/** Why a job ends failed, as the engine saw it; each kind words it for its own business row. */
export type OutboundFailure =
  | { cause: 'unavailable'; missing: 'network' | 'signer' }
  /** Refused before anything was signed or stored (no gas, no tokens, the token refuses a party). */
  | { cause: 'rejected'; reason: SendFailureReason; refusal?: TokenRefusal; detail: string }
  /** Landed and failed (reverted, out of energy, expired): nothing moved. */
  | { cause: 'reverted'; reason: TxFailureReason; refusal?: TokenRefusal; detail: string; txHash: string }
  /** Landed, yet nothing reached the destination; `elsewhere` base units left for other addresses. */
  | { cause: 'undelivered'; elsewhere: bigint; txHash: string };

/** True when the engine failed the job before this run signed anything (its close must not overrule another run's attempt). */
/**
 * The failure reason stored on a sweep step or a deposit setup (and shown to operators): what the engine saw, in one
 * line. Subscription charges word theirs for the customer's invoice instead (src/subscriptions/charge-engine.ts).
 */
export function describeOutboundFailure(f: OutboundFailure): string {
  const refusal = (r?: TokenRefusal) => (r ? ` (${r})` : '');
  switch (f.cause) {
    case 'unavailable':
      return `${f.missing} unavailable`;
    case 'rejected':
      return `refused before signing: ${f.reason}${refusal(f.refusal)}: ${f.detail}`;
    case 'reverted':
      return `failed on chain: ${f.reason}${refusal(f.refusal)}: ${f.detail}; transaction ${f.txHash}`;
    case 'undelivered':
      return `landed but nothing reached the destination (${f.elsewhere} base units elsewhere); transaction ${f.txHash}`;
    default: {
      const never: never = f;
      return never;
    }
  }
}

export const nothingSigned = (f: OutboundFailure): boolean => f.cause === 'rejected' || f.cause === 'unavailable';

/** Where a succeeded transaction landed and the fee it burnt (native base units, paid by the sender). */
export interface Landed {
  block: BlockRef;
  fee: bigint;
}

/** What a succeeded, final transaction delivered. */
export type Receipt =
  | { kind: 'delivered'; settle(): Promise<StepResult> }
  | { kind: 'undelivered'; elsewhere: bigint }
  /** Not readable as succeeded any more (a reorg since): look again next step. */
  | { kind: 'unread' };

/** A transfer ready to be built: the sending wallet, and how to build at a nonce and fee bump. */
export interface Prepared {
  kind: 'ready';
  from: { key: KeyPath; address: string };
  build(nonce: bigint | null, feeBumpPercent: number): Promise<UnsignedTransfer>;
  /**
   * Other wallets whose transactions the ledger does not know also hold this send (families without account nonces,
   * docs/outbound.md "Transactions the ledger does not know"): a sweep step waits while any sender of its sweep is
   * held, so that a restored sweep shows the operator every transaction of it found on chain, not only its next one's.
   */
  alsoHeldBy?: readonly string[];
  /** Called once the attempt is stored, before its broadcast. */
  signed?(a: OutboundAttempt): void;
}

export interface OutboundKind<J, A extends ChainAdapter = ChainAdapter> {
  store: OutboundStore<J>;
  /** Log fields naming the job. */
  describe(job: J): Record<string, string>;
  /** The adapter that sends for this job, or what is missing to send at all. */
  adapter(job: J): { adapter: A } | { missing: 'network' | 'signer' };
  network(job: J): { network: NetworkId; mode: Mode };
  /** Why the job's transactions are signed: the signer role checks it against the ledger (docs/signer.md). */
  intent(job: J): SigningIntent;
  outcome(adapter: A, job: J, a: OutboundAttempt): Promise<TxOutcome>;
  /** `landed`: the succeeded transaction's block and network fee (native base units), for the journal. */
  receipt(adapter: A, job: J, a: OutboundAttempt, landed: Landed): Promise<Receipt>;
  /**
   * The wallet and builder for a first attempt (`replacing` null: pre-flight checks first, failing the job with their
   * reason) or a fee-bumped replacement. A step result instead stops here.
   */
  prepare(adapter: A, job: J, replacing: OutboundAttempt | null): Promise<Prepared | StepResult>;
  fail(job: J, failure: OutboundFailure): Promise<StepResult>;
}
