import { formatMinor } from '../money.js';
import { STABLECOIN_EXPONENT } from '../../../chains/vocabulary.js';

// data.object of payment events (interface.md, Events → Payment events). `amount` and `currency` name what the payer
// pays in: the stablecoin amount as a decimal string and `USDT`/`USDC`; empty strings where nothing applies (an expiry
// with nothing received). `exchange_rate` is "1" when no conversion took place.

export type PaymentOutcome = 'completed' | 'failed' | 'expired' | 'canceled';
export type PaymentEventType = 'payment.completed' | 'payment.failed' | 'payment.expired' | 'payment.cancelled';

/** Event type per outcome; the spec spells the type `payment.cancelled` and the status `canceled`. */
export const PAYMENT_EVENT_TYPE: Record<PaymentOutcome, PaymentEventType> = {
  completed: 'payment.completed',
  failed: 'payment.failed',
  expired: 'payment.expired',
  canceled: 'payment.cancelled',
};

/** What a payment event says of its session (a payment_sessions row has these columns). */
export interface PaymentEventSession {
  id: string;
  order_id: string;
  target_amount_minor: bigint;
  target_currency: string;
  exchange_rate: string | null;
}

export function paymentEventObject(
  s: PaymentEventSession,
  outcome: PaymentOutcome,
  amount: { text: string; currency: string } = {
    text: formatMinor(s.target_amount_minor, STABLECOIN_EXPONENT),
    currency: s.target_currency,
  },
): Record<string, unknown> {
  return {
    amount: amount.text,
    status: outcome,
    currency: amount.currency,
    exchange_rate: s.exchange_rate ?? '1',
    order_id: s.order_id,
    session_id: s.id,
    source: 'api',
  };
}
