import { jsonInt, unixSeconds } from './json-int.js';

// data.object of invoice events (interface.md, Invoice events). A failed charge leaves the invoice `open` with
// payment_status `failed` (decisions.md), so invoice.payment_failed carries status `open`.

export type InvoiceEventType = 'invoice.created' | 'invoice.paid' | 'invoice.payment_failed';
export const INVOICE_EVENT_TYPES: readonly InvoiceEventType[] = ['invoice.created', 'invoice.paid', 'invoice.payment_failed'];

export type InvoiceStatus = 'draft' | 'open' | 'paid' | 'void' | 'uncollectible';
export type InvoicePaymentStatus = 'unpaid' | 'paid' | 'failed';

export interface InvoiceEventInput {
  invoiceId: string;
  subscriptionId: string;
  customerId: string;
  amountDueMinor: bigint;
  amountPaidMinor: bigint;
  currency: string;
  status: InvoiceStatus;
  paymentStatus: InvoicePaymentStatus;
  billingReason: string;
  periodStart: Date;
  periodEnd: Date;
  paidAt?: Date | null;
}

export function invoiceEventObject(i: InvoiceEventInput): Record<string, unknown> {
  return {
    invoice_id: i.invoiceId,
    subscription_id: i.subscriptionId,
    customer_id: i.customerId,
    amount_due: jsonInt(i.amountDueMinor, 'amount_due'),
    amount_paid: jsonInt(i.amountPaidMinor, 'amount_paid'),
    amount_remaining: jsonInt(i.amountDueMinor - i.amountPaidMinor, 'amount_remaining'),
    currency: i.currency,
    status: i.status,
    payment_status: i.paymentStatus,
    billing_reason: i.billingReason,
    period_start: unixSeconds(i.periodStart),
    period_end: unixSeconds(i.periodEnd),
    ...(i.paidAt ? { paid_at: unixSeconds(i.paidAt) } : {}),
    source: 'api',
  };
}
