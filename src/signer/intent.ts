import type { KeyPath, Secp256k1Signature, SigningPreimage, TxSigner } from '../../chains/types.js';

// Why a transaction is signed: the business object the outbound engine is sending for (docs/signer.md). A signer
// that holds the seed alone (the `signer` role) reads that object in the ledger and signs only what it justifies;
// the in-process signer ignores it. Every transaction we send goes through the outbound engine, which attaches the
// intent of its job, so nothing reaches a signer without one.

export type SigningIntent =
  /** A refund payout from the merchant's refunds hot wallet (refunds.id). */
  | { purpose: 'refund_payout'; refund_id: string }
  /** A Solana deposit owner's token account, paid by the deposit-setup wallet (deposit_setups.id). */
  | { purpose: 'deposit_setup'; setup_id: string }
  /** One step of a sweep (sweeps.id, sweep_steps.id). */
  | { purpose: 'sweep_step'; sweep_id: string; step_id: string }
  /** A subscription charge from the customer's authorisation (subscription_charges.id). */
  | { purpose: 'subscription_charge'; charge_id: string }
  /** A retired gas station's native coin to the current one, after a rotation (gas_station_drains.id). */
  | { purpose: 'gas_station_drain'; drain_id: string };

/** A signer that is told why: what a remote signer needs besides the key, the digest and its preimage. */
export interface IntentSigner {
  publicKey(key: KeyPath): Promise<Uint8Array>;
  signSecp256k1Digest(
    key: KeyPath,
    digest: Uint8Array,
    preimage: SigningPreimage | undefined,
    intent: SigningIntent,
  ): Promise<Secp256k1Signature>;
  signEd25519(key: KeyPath, message: Uint8Array, intent: SigningIntent): Promise<Uint8Array>;
}

export function isIntentSigner(s: TxSigner | IntentSigner): s is IntentSigner {
  return (s as { intentAware?: boolean }).intentAware === true;
}

/**
 * The signer the chains see for one job: a plain TxSigner (the in-process one) is used as is; an intent-aware one
 * (the remote signer) receives the job's intent with every signature asked.
 */
export function withIntent(signer: TxSigner, intent: SigningIntent): TxSigner {
  if (!isIntentSigner(signer as TxSigner | IntentSigner)) return signer;
  const s = signer as unknown as IntentSigner;
  return {
    publicKey: (key) => s.publicKey(key),
    signSecp256k1Digest: (key, digest, preimage) => s.signSecp256k1Digest(key, digest, preimage, intent),
    signEd25519: (key, message) => s.signEd25519(key, message, intent),
  };
}
