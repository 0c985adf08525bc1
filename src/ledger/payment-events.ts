import type { Selectable } from 'kysely';
import type { PaymentSessionsTable } from '../db/schema.js';
import { formatMinor } from '../domain/money.js';
import { STABLECOIN_EXPONENT } from '../domain/vocabulary.js';

export type SessionRow = Selectable<PaymentSessionsTable>;
export type PaymentOutcome = 'completed' | 'failed' | 'expired' | 'canceled';

/** Event type per outcome; the spec spells the type `payment.cancelled` and the status `canceled`. */
export const PAYMENT_EVENT_TYPE: Record<PaymentOutcome, string> = {
  completed: 'payment.completed',
  failed: 'payment.failed',
  expired: 'payment.expired',
  canceled: 'payment.cancelled',
};

/**
 * data.object of payment events (spec: Events → Payment events). `amount` and `currency` name what the payer
 * pays in: the stablecoin amount as a decimal string and `USDT`/`USDC`; empty strings where nothing applies
 * (an expiry with nothing received). `exchange_rate` is "1" when no conversion took place.
 */
export function paymentEventObject(
  s: SessionRow,
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
