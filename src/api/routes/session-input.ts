import { z } from 'zod';
import type { LineItemRecord } from '../../db/schema.js';
import { currencyExponent, isStablecoin, type Stablecoin } from '../../domain/currency.js';
import { ApiError, invalidAmount, parameterInvalid } from '../../domain/errors.js';
import { InvalidAmountError, parseDecimalToMinor } from '../../domain/money.js';
import { isNetworkId, NETWORK_IDS, type NetworkId } from '../../../chains/vocabulary.js';
import { validate } from '../json-body.js';

// Create-session body: the spec's parameters, strict (unknown fields are refused), money parsed to minor units.

const httpUrl = z
  .string()
  .max(2048)
  .refine((v) => /^https?:\/\//i.test(v) && URL.canParse(v), 'must be an absolute http(s) URL');

const metadata = z.record(z.string().min(1).max(40), z.string().max(500)).refine((m) => Object.keys(m).length <= 50, 'at most 50 keys');

const lineItem = z.strictObject({
  price_data: z.strictObject({
    currency: z.string().min(1).max(10),
    unit_amount: z.string(),
    product_data: z.strictObject({
      name: z.string().min(1).max(250),
      description: z.string().max(1000).optional(),
    }),
  }),
  quantity: z.number().int().min(1).max(1_000_000).optional(),
});

/** The create-session body (also the OpenAPI document's `CreateSessionRequest`). */
export const createSessionSchema = z.strictObject({
  amount: z.string(),
  currency: z.string().min(1).max(10),
  order_id: z.string().min(1).max(255),
  merchant_domain_id: z.string().max(255).optional(),
  description: z.string().max(1000).optional(),
  line_items: z.array(lineItem).max(100).optional(),
  tax_amount: z.string().optional(),
  shipping_amount: z.string().optional(),
  success_url: httpUrl.optional(),
  cancel_url: httpUrl.optional(),
  metadata: metadata.optional(),
});

const AMOUNT_PARAMS = new Set(['amount', 'unit_amount', 'tax_amount', 'shipping_amount']);

export interface CreateSessionInput {
  orderId: string;
  currency: string; // uppercase
  amountMinor: bigint;
  description: string | null;
  merchantDomainId: string | null;
  lineItems: LineItemRecord[] | null;
  taxMinor: bigint | null;
  shippingMinor: bigint | null;
  successUrl: string | null;
  cancelUrl: string | null;
  metadata: Record<string, string>;
  pinnedNetwork: NetworkId | null;
  targetCurrency: Stablecoin;
}

export function parseCreateSession(body: Record<string, unknown>): CreateSessionInput {
  const b = validate(createSessionSchema, body, AMOUNT_PARAMS);
  const currency = b.currency.toUpperCase();
  const exp = currencyExponent(currency);
  if (exp === undefined) {
    throw new ApiError(400, 'invalid_request_error', 'INVALID_CURRENCY', `Unsupported currency: ${b.currency}.`, 'currency');
  }
  const amountMinor = money(b.amount, exp, 'amount');
  if (amountMinor <= 0n) throw invalidAmount('amount', 'must be above zero');

  const lineItems = b.line_items?.map((li, i): LineItemRecord => {
    const param = `line_items[${i}][price_data]`;
    if (li.price_data.currency.toUpperCase() !== currency) {
      throw parameterInvalid(`${param}[currency]`, `Line item currency must equal the session currency (${b.currency}).`);
    }
    return {
      price_data: {
        currency,
        unit_amount_minor: money(li.price_data.unit_amount, exp, `${param}[unit_amount]`).toString(),
        product_data: li.price_data.product_data,
      },
      quantity: li.quantity ?? 1,
    };
  });

  const meta = b.metadata ?? {};
  if (meta.order_id !== undefined && meta.order_id !== b.order_id) {
    throw parameterInvalid('metadata[order_id]', 'metadata.order_id, when given, must equal order_id.');
  }
  // Networks a merchant may pin with metadata.network (decisions.md: an extension).
  const pinned = meta.network ?? null;
  if (pinned !== null && !isNetworkId(pinned)) {
    throw parameterInvalid('metadata[network]', `metadata.network must be one of ${NETWORK_IDS.join(', ')}.`);
  }
  const pinnedNetwork = pinned;
  const target = (meta.target_currency ?? (isStablecoin(currency) ? currency : 'USDT')).toUpperCase();
  if (!isStablecoin(target)) throw parameterInvalid('metadata[target_currency]', 'metadata.target_currency must be USDT or USDC.');

  return {
    orderId: b.order_id,
    currency,
    amountMinor,
    description: b.description ?? null,
    merchantDomainId: b.merchant_domain_id ?? null,
    lineItems: lineItems ?? null,
    taxMinor: b.tax_amount === undefined ? null : money(b.tax_amount, exp, 'tax_amount'),
    shippingMinor: b.shipping_amount === undefined ? null : money(b.shipping_amount, exp, 'shipping_amount'),
    successUrl: b.success_url ?? null,
    cancelUrl: b.cancel_url ?? null,
    metadata: Object.fromEntries(Object.entries(meta).filter(([k]) => k !== 'order_id')),
    pinnedNetwork,
    targetCurrency: target,
  };
}

function money(text: string, exponent: number, param: string): bigint {
  try {
    return parseDecimalToMinor(text, exponent);
  } catch (e) {
    if (e instanceof InvalidAmountError) throw invalidAmount(param, `"${text}" ${e.reason}`);
    throw e;
  }
}
