import { z } from 'zod';
import type { SessionRow } from '../../ledger/payments/sessions.js';
import { jsonInt } from '../../domain/events/json-int.js';
import { unix } from './session.js';
import { metadataOut, minorUnits, networkId, tokenSymbol, unixTime } from './schema-parts.js';

/** The Payment object serializePayment answers with (the OpenAPI document's `Payment`). */
export const paymentSchema = z.strictObject({
  id: z.string(),
  object: z.literal('payment'),
  amount_total: minorUnits,
  currency: z.string(),
  payment_status: z.enum(['unpaid', 'paid']),
  created: unixTime,
  expires_at: unixTime,
  line_items: z.array(
    z.strictObject({
      price_data: z.strictObject({
        currency: z.string(),
        unit_amount: minorUnits,
        product_data: z.strictObject({ name: z.string(), description: z.string().optional() }),
      }),
      quantity: z.number().int().min(1),
    }),
  ),
  subscription_id: z.string(),
  invoice_id: z.string(),
  network: networkId.nullable(),
  transaction_hash: z.string().nullable(),
  paid_at: unixTime.nullable(),
  metadata: metadataOut,
  description: z.string().optional(),
  tax_amount: minorUnits.optional(),
  shipping_amount: minorUnits.optional(),
  exchange_rate: z.string().optional(),
  target_currency: tokenSymbol.optional(),
  target_amount_total: minorUnits.optional(),
  rate_locked_at: unixTime.optional(),
});

// A subscription payment (pay_) as GET /api/v1/payment/{id} shows it: the PaymentSession shape with integer minor
// units and uppercase currency codes, plus subscription_id and invoice_id (interface.md, decisions.md).
export function serializePayment(
  p: SessionRow,
  refs: { subscriptionId: string; invoiceId: string; transactionHash: string | null },
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: p.id,
    object: 'payment',
    amount_total: jsonInt(p.amount_minor, 'amount_total'),
    currency: p.currency.toUpperCase(),
    payment_status: p.status === 'paid' ? 'paid' : 'unpaid',
    created: unix(p.created_at),
    expires_at: unix(p.expires_at),
    line_items: (p.line_items ?? []).map((li) => ({
      price_data: {
        currency: li.price_data.currency.toUpperCase(),
        unit_amount: jsonInt(BigInt(li.price_data.unit_amount_minor), 'unit_amount'),
        product_data: li.price_data.product_data,
      },
      quantity: li.quantity,
    })),
    subscription_id: refs.subscriptionId,
    invoice_id: refs.invoiceId,
    network: p.network,
    transaction_hash: refs.transactionHash,
    paid_at: p.paid_at ? unix(p.paid_at) : null,
    metadata: p.metadata,
  };
  if (p.description !== null) out.description = p.description;
  if (p.tax_minor !== null) out.tax_amount = jsonInt(p.tax_minor, 'tax_amount');
  if (p.shipping_minor !== null) out.shipping_amount = jsonInt(p.shipping_minor, 'shipping_amount');
  if (p.target_currency.toUpperCase() !== p.currency.toUpperCase()) {
    out.exchange_rate = p.exchange_rate ?? '1';
    out.target_currency = p.target_currency.toUpperCase();
    out.target_amount_total = jsonInt(p.target_amount_minor, 'target_amount_total');
    out.rate_locked_at = unix(p.rate_locked_at ?? p.created_at);
  }
  return out;
}
