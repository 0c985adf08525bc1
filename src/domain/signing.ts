// The signer role's closed vocabularies (docs/signer.md): why something is signed, and why a signature is refused.
// Shared by the signer's protocol, the signer service and the metrics' label values.

export const SIGNING_PURPOSES = ['refund_payout', 'deposit_setup', 'sweep_step', 'subscription_charge', 'gas_station_drain'] as const;
export type SigningPurpose = (typeof SIGNING_PURPOSES)[number];

/** Why the signer refused (docs/signer.md, "Refusals"): each is an audit row and a metric label. */
export const REFUSAL_CODES = [
  'malformed_request',
  'replayed_request',
  'paused',
  'digest_mismatch',
  'undecodable_transaction',
  'unknown_object',
  'not_payable',
  'wrong_key',
  'wrong_chain',
  'wrong_contract',
  'wrong_method',
  'wrong_recipient',
  'wrong_amount',
  'native_value',
  'over_limit',
  'purpose_not_supported',
] as const;
export type RefusalCode = (typeof REFUSAL_CODES)[number];
