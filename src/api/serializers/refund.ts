import type { RefundRow } from '../../ledger/refunds.js';
import { hasIdShape } from '../../domain/ids.js';
import { jsonInt } from '../../domain/events/json-int.js';
import { unix } from './session.js';
import { deliveredMinor } from '../../domain/refund-state.js';

/** The invoice and subscription behind a subscription payment (pay_) that a refund pays back. */
export interface RefundSubscriptionRefs {
  invoice_id: string;
  subscription_id: string;
}

// Refund as the spec shapes it: amounts in 2-decimal minor units as integers, Unix-second times, null where a value
// does not apply yet. Extensions: `id` (our re_ id), `network`, `destination_address`, and `amount_delivered` (what the
// destination received once completed, minor units rounded down; below `amount` when the token took a fee).
// Extension `deposit_id`: present on a refund that pays back one unmatched deposit (docs/refunds.md).
// Subscription flow (a refund of a pay_ payment): `payment_id` in place of `session_id`, plus `invoice_id` and
// `subscription_id` (interface.md: Refund, Create refund; decisions.md: refunds in this flow name payment_id).
export function serializeRefund(
  r: RefundRow,
  displayAddress: (network: string, canonical: string) => string,
  subscription?: RefundSubscriptionRefs,
): Record<string, unknown> {
  return {
    id: r.id,
    object: 'refund',
    refund_id: r.refund_id,
    ...(isSubscriptionPayment(r.session_id) ? { payment_id: r.session_id } : { session_id: r.session_id }),
    order_id: r.order_id,
    amount: jsonInt(r.amount_minor, 'amount'),
    amount_delivered:
      r.delivered_base === null ? null : jsonInt(deliveredMinor({ ...r, delivered_base: r.delivered_base }), 'amount_delivered'),
    currency: r.currency,
    status: r.status,
    reason: r.reason,
    description: r.description,
    failure_reason: r.failure_reason,
    transaction_hash: r.transaction_hash,
    receipt_number: r.receipt_number,
    network: r.network,
    destination_address: displayAddress(r.network, r.destination_address),
    created_at: unix(r.created_at),
    processed_at: r.processed_at ? unix(r.processed_at) : null,
    canceled_at: r.canceled_at ? unix(r.canceled_at) : null,
    metadata: r.metadata,
    ...(r.deposit_id !== null ? { deposit_id: r.deposit_id } : {}),
    ...(subscription ? { invoice_id: subscription.invoice_id, subscription_id: subscription.subscription_id } : {}),
  };
}

/** A pay_ id names the payment-session record behind an invoice: the subscription flow. */
export function isSubscriptionPayment(sessionId: string): boolean {
  return hasIdShape(sessionId, 'pay');
}
