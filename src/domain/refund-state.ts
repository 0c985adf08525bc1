/** A refund's status (column refunds.status). */
export type RefundStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'canceled';

// Refund life (spec: States → Refund; decisions.md): pending → processing → completed | failed; pending or
// processing → canceled, the latter only until the payout transaction has been signed (refunds.signed_at).
export const REFUND_TRANSITIONS = {
  startProcessing: ['pending'],
  cancel: ['pending', 'processing'],
  complete: ['processing'],
  fail: ['pending', 'processing'],
} as const satisfies Record<string, readonly RefundStatus[]>;

/** Refunds that still count against the amount paid and the daily limit. */
export const LIVE_REFUND_STATUSES: readonly RefundStatus[] = ['pending', 'processing', 'completed'];

export const REFUND_REASONS = ['requested_by_customer', 'duplicate', 'fraudulent', 'expired_uncaptured'] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];

/** Human-readable failure reasons stored in failure_reason, one per cause the payout engine distinguishes. */
export const REFUND_FAILURE_MESSAGES = {
  insufficient_gas: 'The hot wallet does not hold enough native coin to pay the network fee.',
  insufficient_token_balance: 'The hot wallet does not hold enough of the token.',
  simulation_reverted: 'The token contract refused the transfer (for example a blacklisted destination).',
  token_paused: 'The token contract refused the transfer: the token is paused by its issuer.',
  recipient_blacklisted: 'The token contract refused the transfer: the destination address is blacklisted by the token issuer.',
  sender_blacklisted: 'The token contract refused the transfer: the hot wallet is blacklisted by the token issuer.',
  reverted: 'The transfer transaction reverted on chain.',
  out_of_energy: 'The transfer ran out of energy (TRON fee_limit too low).',
  no_transfer_event: 'The transaction was mined but moved no tokens.',
  wrong_recipient:
    'The transaction was mined but its tokens went to another address than the destination; check the transaction before paying again.',
  expired: 'The signed transaction expired before it could land.',
  dropped: 'The transaction was dropped by the network.',
  invalid: 'The transfer could not be built.',
  network_unavailable: 'The refund network is not configured on this deployment.',
  signer_unavailable: 'This deployment holds no signing key for payouts.',
} as const;
export type RefundFailureCode = keyof typeof REFUND_FAILURE_MESSAGES;

/**
 * What the destination received, in the refund's 2-decimal minor units, rounded down: never more than arrived.
 * amount_base / amount_minor is the token's 10^(decimals - 2), so the scale needs no decimals here.
 */
export function deliveredMinor(r: { delivered_base: bigint; amount_base: bigint; amount_minor: bigint }): bigint {
  return (r.delivered_base * r.amount_minor) / r.amount_base;
}
