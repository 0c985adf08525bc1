import { jsonInt } from './json-int.js';

// data.object of refund events (interface.md, Refund events; decisions.md: amounts are int64 minor units).
// Payment-session flow: refund_id is the merchant's refund_id. Subscription flow: refund_id is the service's re_ id,
// external_refund_id the merchant's, and session_id names the pay_ payment (the session record behind the invoice).

export type RefundEventType = 'refund.succeeded' | 'refund.failed';
export type RefundOutcome = 'completed' | 'failed';

export const REFUND_EVENT_TYPE: Record<RefundOutcome, RefundEventType> = {
  completed: 'refund.succeeded',
  failed: 'refund.failed',
};

export interface RefundEventInput {
  outcome: RefundOutcome;
  sessionId: string;
  orderId: string;
  /** Merchant refund id (session flow) or service re_ id (subscription flow). */
  refundId: string;
  amountMinor: bigint;
  currency: 'USDT' | 'USDC';
  /** Completed refunds: what the destination received, minor units rounded down (extension `amount_delivered`). */
  deliveredMinor?: bigint;
  /** Extension: the unmatched deposit this refund pays back. */
  depositId?: string;
  /** Extension: the transaction of a failed refund, when one was mined (it reverted or moved nothing). */
  transactionHash?: string;
  /** Subscription flow only. */
  subscription?: { externalRefundId?: string; originalCurrency?: string };
}

export function refundEventObject(r: RefundEventInput): Record<string, unknown> {
  return {
    session_id: r.sessionId,
    order_id: r.orderId,
    refund_id: r.refundId,
    refund_amount: jsonInt(r.amountMinor, 'refund_amount'),
    refund_currency: r.currency,
    status: r.outcome,
    source: 'api',
    ...(r.deliveredMinor !== undefined ? { amount_delivered: jsonInt(r.deliveredMinor, 'amount_delivered') } : {}),
    ...(r.depositId !== undefined ? { deposit_id: r.depositId } : {}),
    ...(r.transactionHash !== undefined ? { transaction_hash: r.transactionHash } : {}),
    ...(r.subscription?.externalRefundId !== undefined ? { external_refund_id: r.subscription.externalRefundId } : {}),
    ...(r.subscription?.originalCurrency !== undefined ? { original_currency: r.subscription.originalCurrency } : {}),
  };
}
