import type { Mode, NetworkId } from '../../chains/vocabulary.js';
import type { SigningPreimage } from '../../chains/types.js';

// What every justification (refund payout, deposit setup, charge, sweep step) reads and answers: the signed bytes, what the audit
// learns on the way (even when it ends in a refusal), and what a justified send is for the limits and the audit.

/** What a justified send is, for the limits and the audit (a refund payout's amount; 0 for a deposit setup). */
export interface JustifiedSend {
  /** null: an operator wallet's own send (a gas-station drain), no merchant's. */
  merchantId: string | null;
  network: NetworkId;
  mode: Mode;
  token: string;
  decimals: number;
  amount: bigint;
  /** `limited`: a sweep step the limits count (tokens to a recently changed treasury), as the audit records it. */
  summary: { to: string; token: string; contract: string; amount_base: string; limited?: boolean };
}

/** What the audit learns before the refusal or the signature: the object's owner and chain, once read. */
export interface AuditContext {
  merchantId?: string;
  network?: string;
  mode?: string;
  summary?: JustifiedSend['summary'];
  amount?: bigint;
}

/** What is signed: a secp256k1 digest's preimage, or (ed25519, Solana) the message itself. */
export type SignedPreimage = SigningPreimage | { kind: 'solana-message'; message: Uint8Array };
