import { z } from 'zod';
import type { InvoiceRow } from '../../ledger/subscriptions/invoices.js';
import { jsonInt } from '../../domain/events/json-int.js';
import { unix } from './session.js';
import { metadataOut, minorUnits, unixTime } from './schema-parts.js';

export const INVOICE_STATUSES = ['draft', 'open', 'paid', 'void', 'uncollectible'] as const;

/** The Invoice object serializeInvoice answers with (the OpenAPI document's `Invoice`). */
export const invoiceSchema = z.strictObject({
  id: z.string(),
  object: z.literal('invoice'),
  subscription_id: z.string(),
  customer: z.string(),
  amount_due: minorUnits,
  amount_paid: minorUnits,
  amount_remaining: minorUnits,
  currency: z.string(),
  status: z.enum(INVOICE_STATUSES),
  payment_status: z.enum(['unpaid', 'paid', 'failed']),
  billing_reason: z.string(),
  period_start: unixTime,
  period_end: unixTime,
  payment_id: z.string().nullable(),
  paid_at: unixTime.nullable(),
  due_date: unixTime,
  attempt_count: z.number().int().min(0),
  metadata: metadataOut,
  created: unixTime,
});

// Invoice as the spec shapes it: integer minor units, Unix seconds.
export function serializeInvoice(i: InvoiceRow): Record<string, unknown> {
  return {
    id: i.id,
    object: 'invoice',
    subscription_id: i.subscription_id,
    customer: i.customer,
    amount_due: jsonInt(i.amount_due_minor, 'amount_due'),
    amount_paid: jsonInt(i.amount_paid_minor, 'amount_paid'),
    amount_remaining: jsonInt(i.amount_due_minor - i.amount_paid_minor, 'amount_remaining'),
    currency: i.currency,
    status: i.status,
    payment_status: i.payment_status,
    billing_reason: i.billing_reason,
    period_start: unix(i.period_start),
    period_end: unix(i.period_end),
    payment_id: i.payment_id,
    paid_at: i.paid_at ? unix(i.paid_at) : null,
    due_date: unix(i.due_date),
    attempt_count: i.attempt_count,
    metadata: i.metadata,
    created: unix(i.created_at),
  };
}
