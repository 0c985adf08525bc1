import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { ChainAdapter, KeyDeriver, KeyPath, Sweeper, TokenContract, Wallet } from '../../chains/types.js';
import type { SweepRow, SweepSourceRow, SweepStepRow } from '../ledger/treasury/sweeps.js';
import type { AuditContext, JustifiedSend, SignedPreimage } from './justified.js';

// What the signer hands a chain family's justification of a sweep step (justify-sweep.ts builds it; justify-sweep-evm.ts,
// -tron.ts and -solana.ts read it): the ledger's rows, the wallets the signer derived itself, the request's key and
// signed bytes. Its own file so that the families and the common part do not import each other.

/**
 * What a family's justification of a sweep step gets: the ledger's rows (read by id, never trusted for destinations),
 * the wallets the signer derived itself, and the request (key, signed bytes). It answers the JustifiedSend: `amount`
 * is the token base units the signed transaction moves out of deposit addresses (0 for a step that moves none: a
 * deploy, a top-up, a reclaim, an authorization, a delegation), `summary.to` where they (or the native coin) go.
 * It refuses (`refuse(code, reason)`) anything else, and records in `seen` what the audit should show.
 */
export interface SweepStepContext {
  sweep: SweepRow;
  step: SweepStepRow;
  /** Every source row of the sweep (state `planned` until its tokens moved); use the helpers below to trust one. */
  sources: SweepSourceRow[];
  adapter: ChainAdapter & Sweeper;
  adapters: ChainRegistry;
  keys: KeyDeriver;
  /** The registry's contract of the sweep's token on its network and mode. */
  token: TokenContract;
  /** The merchant's HD account (the one its deposit addresses and hot wallets derive from). */
  account: number;
  /** Derived: the merchant's refunds hot wallet (HOT_WALLET_SLOT.refunds). */
  hotWallet: Wallet;
  /** The merchant's current treasury address on this network (canonical), or null. */
  treasury: string | null;
  /** Where tokens may go (canonical): the refunds hot wallet, and the treasury when one is set. */
  destinations: string[];
  /** Derived: the operator's wallets (OPERATOR_ACCOUNT), the gas station and TRON's resources account. */
  gasStation: Wallet;
  resources: Wallet;
  /**
   * The source of this sweep whose deposit key `key` is, checked against the seed (verifiedDepositKey: the merchant's
   * account, the address derived again); null when `key` is no verified source's key.
   */
  sourceByKey(key: KeyPath): Promise<SweepSourceRow | null>;
  /** The source of this sweep at `address` (canonical), when its stored key is verified; null otherwise. */
  sourceByAddress(address: string): Promise<SweepSourceRow | null>;
  /** The key asked for, the bytes to sign (decoded by the family), and what the audit learns. */
  key: KeyPath;
  preimage: SignedPreimage;
  seen: AuditContext;
}

/** A family's sweep-step justification. */
export type FamilySweepJustifier = (ctx: SweepStepContext) => Promise<JustifiedSend>;

/** A justified sweep step, with whether the limits count it (tokens to a recently changed treasury). */
export interface JustifiedSweepStep extends JustifiedSend {
  limited: boolean;
}
