import type { InvoiceRow } from '../../ledger/invoices.js';
import { jsonInt } from '../../domain/events/json-int.js';
import { unix } from './session.js';

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
