import { z } from 'zod';
import type { RefundRow } from '../../ledger/refunds/refunds.js';
import { hasIdShape } from '../../domain/ids.js';
import { jsonInt } from '../../domain/events/json-int.js';
import { unix } from './session.js';
import { deliveredMinor, REFUND_REASONS } from '../../domain/refund-state.js';
import { metadataOut, minorUnits, networkId, tokenSymbol, unixTime } from './schema-parts.js';

export const REFUND_STATUSES = ['pending', 'processing', 'completed', 'failed', 'canceled'] as const;

/** The Refund object serializeRefund answers with (the OpenAPI document's `Refund`). */
export const refundSchema = z.strictObject({
  id: z.string().meta({ description: 'Extension: our re_ id.' }),
  object: z.literal('refund'),
  refund_id: z.string().meta({ description: 'Your refund_id.' }),
  session_id: z.string().optional().meta({ description: 'Payment-session flow: the refunded session.' }),
  payment_id: z.string().optional().meta({ description: 'Subscription flow: the refunded pay_ payment (in place of session_id).' }),
  deposit_id: z.string().optional().meta({ description: 'Extension: the unmatched deposit this refund pays back.' }),
  order_id: z.string(),
  amount: minorUnits,
  amount_delivered: minorUnits
    .nullable()
    .meta({ description: 'Extension: what the destination received, rounded down; null until completed.' }),
  currency: tokenSymbol,
  status: z.enum(REFUND_STATUSES),
  reason: z.enum(REFUND_REASONS).nullable(),
  description: z.string().nullable(),
  failure_reason: z.string().nullable(),
  transaction_hash: z.string().nullable(),
  receipt_number: z.string().nullable(),
  network: networkId.meta({ description: 'Extension: the network the refund is paid on.' }),
  destination_address: z.string().meta({ description: 'Extension: where the refund is paid.' }),
  created_at: unixTime,
  processed_at: unixTime.nullable(),
  canceled_at: unixTime.nullable(),
  metadata: metadataOut,
  invoice_id: z.string().optional().meta({ description: 'Subscription flow only.' }),
  subscription_id: z.string().optional().meta({ description: 'Subscription flow only.' }),
});

/** The answer of POST /refunds/{refund_id}/cancel. */
export const refundCancellationSchema = z.strictObject({
  refund_id: z.string(),
  status: z.literal('canceled'),
  canceled_at: unixTime,
});

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
