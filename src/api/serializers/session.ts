import { sessionReceivedShape } from '../../domain/events/catalog.js';
import { z } from 'zod';
import { currencyExponent } from '../../domain/currency.js';
import { formatBaseUnits, formatMinor } from '../../domain/money.js';
import { paymentStatus } from '../../domain/session-state.js';
import { STABLECOIN_EXPONENT } from '../../../chains/vocabulary.js';
import type { TokenDecimals } from '../../domain/chain-lookup.js';
import { sessionTokenDecimals, type SessionRow } from '../../ledger/payments/sessions.js';
import { decimalString, metadataOut, unixTime } from './schema-parts.js';

// PaymentSession as the spec shapes it: decimal strings at the merchant currency's exponent, lowercase currency,
// conversion fields only when the merchant currency differs from the settlement currency, order_id in metadata.
export interface SerializeOptions {
  checkoutBaseUrl: string;
  includeLineItems?: boolean;
  /** For the shortfall in token units. */
  tokenDecimals: TokenDecimals;
}

const lineItemSchema = z.strictObject({
  price_data: z.strictObject({
    currency: z.string(),
    unit_amount: decimalString,
    product_data: z.strictObject({ name: z.string(), description: z.string().optional() }),
  }),
  quantity: z.number().int().min(1),
});

/** The PaymentSession object serializeSession answers with (the OpenAPI document's `PaymentSession`). */
export const sessionSchema = z.strictObject({
  id: z.string(),
  amount_total: decimalString,
  currency: z.string().meta({ description: 'Merchant currency, lowercase (e.g. "usd").' }),
  payment_status: z.enum(['unpaid', 'paid']),
  status: z.enum(['open', 'paid', 'expired', 'canceled']),
  created: unixTime,
  expires_at: unixTime,
  url: z.string().meta({ description: 'The hosted payment page.' }),
  description: z.string().optional(),
  merchant_domain_id: z.string().optional(),
  line_items: z.array(lineItemSchema).optional().meta({ description: 'Omitted in the cancel answer.' }),
  tax_amount: decimalString.optional(),
  shipping_amount: decimalString.optional(),
  exchange_rate: z.string().optional().meta({ description: 'Only when the merchant currency is not the settlement coin.' }),
  target_currency: z.enum(['USDT', 'USDC']).optional(),
  target_amount_total: decimalString.optional(),
  rate_locked_at: unixTime.optional(),
  shortfall: decimalString.optional().meta({ description: 'Extension: a session paid short says by how much, in token units.' }),
  shortfall_base: z
    .string()
    .regex(/^\d+$/)
    .optional()
    .meta({ description: 'Extension: the shortfall in base units of the token paid with.' }),
  success_url: z.string().optional(),
  cancel_url: z.string().optional(),
  metadata: metadataOut.meta({ description: 'The merchant metadata, with order_id.' }),
  // Extension: what the session received (docs/checkout.md "What a session received").
  ...sessionReceivedShape,
});

export function serializeSession(s: SessionRow, opts: SerializeOptions): Record<string, unknown> {
  const exp = currencyExponent(s.currency) ?? 2;
  const out: Record<string, unknown> = {
    id: s.id,
    amount_total: formatMinor(s.amount_minor, exp),
    currency: s.currency.toLowerCase(),
    payment_status: paymentStatus(s.status),
    status: s.status,
    created: unix(s.created_at),
    expires_at: unix(s.expires_at),
    url: `${opts.checkoutBaseUrl}/${s.id}`,
  };
  if (s.description !== null) out.description = s.description;
  if (s.merchant_domain_id !== null) out.merchant_domain_id = s.merchant_domain_id;
  if ((opts.includeLineItems ?? true) && s.line_items) {
    out.line_items = s.line_items.map((li) => ({
      price_data: {
        currency: li.price_data.currency.toLowerCase(),
        unit_amount: formatMinor(BigInt(li.price_data.unit_amount_minor), exp),
        product_data: li.price_data.product_data,
      },
      quantity: li.quantity,
    }));
  }
  if (s.tax_minor !== null) out.tax_amount = formatMinor(s.tax_minor, exp);
  if (s.shipping_minor !== null) out.shipping_amount = formatMinor(s.shipping_minor, exp);
  if (s.exchange_rate !== null) {
    out.exchange_rate = s.exchange_rate;
    out.target_currency = s.target_currency;
    out.target_amount_total = formatMinor(s.target_amount_minor, STABLECOIN_EXPONENT);
    out.rate_locked_at = unix(s.rate_locked_at ?? s.created_at);
  }
  // Extension: a session paid short (sub-unit dust, or within the merchant's underpayment tolerance) says by how much,
  // in token units (when this deployment knows the token's decimals) and in base units of the token it was paid with.
  if (s.status === 'paid' && s.shortfall_base !== null && s.shortfall_base > 0n) {
    const decimals = sessionTokenDecimals(s, opts.tokenDecimals);
    if (decimals !== undefined) out.shortfall = formatBaseUnits(s.shortfall_base, decimals);
    out.shortfall_base = s.shortfall_base.toString();
  }
  if (s.success_url !== null) out.success_url = s.success_url;
  if (s.cancel_url !== null) out.cancel_url = s.cancel_url;
  out.metadata = { ...s.metadata, order_id: s.order_id };
  return out;
}

export const unix = (d: Date): number => Math.floor(d.getTime() / 1000);
