import type { Selectable, Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database, InvoicesTable, Mode } from '../../db/schema.js';
import { invoiceEventObject, type InvoiceEventType } from '../../domain/events/invoice.js';
import { insertOutboxEvent } from '../core/outbox.js';
import { cursorPage, type CursorListResult, type CursorPageRequest } from '../core/cursor-page.js';

// Invoices of subscriptions. One per (subscription, period), enforced by a unique key.

export type InvoiceRow = Selectable<InvoicesTable>;
export type InvoiceStatusValue = InvoiceRow['status'];

export async function insertInvoiceEvent(trx: Transaction<Database>, i: InvoiceRow, type: InvoiceEventType, at: Date): Promise<void> {
  await insertOutboxEvent(trx, {
    merchantId: i.merchant_id,
    mode: i.mode,
    type,
    // Invoice events are ordered with their subscription's events (one aggregate per subscription).
    aggregateId: i.subscription_id,
    createdAt: at,
    object: invoiceEventObject({
      invoiceId: i.id,
      subscriptionId: i.subscription_id,
      customerId: i.customer,
      amountDueMinor: i.amount_due_minor,
      amountPaidMinor: i.amount_paid_minor,
      currency: i.currency,
      status: i.status,
      paymentStatus: i.payment_status,
      billingReason: i.billing_reason,
      periodStart: i.period_start,
      periodEnd: i.period_end,
      paidAt: i.paid_at,
    }),
  });
}

export async function findInvoice(db: Db, merchantId: string, mode: Mode, id: string): Promise<InvoiceRow | undefined> {
  return db
    .selectFrom('invoices')
    .selectAll()
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .where('mode', '=', mode)
    .executeTakeFirst();
}

/** Newest first by (created_at, id): the Stripe-style cursor rules of cursor-page.ts. */
export async function listInvoices(
  db: Db,
  merchantId: string,
  mode: Mode,
  o: CursorPageRequest & { subscriptionId?: string; customer?: string; status?: InvoiceStatusValue },
): Promise<CursorListResult<InvoiceRow>> {
  return cursorPage(db, 'invoices', { merchantId, mode }, o, (q) => {
    let f = q;
    if (o.subscriptionId !== undefined) f = f.where('subscription_id', '=', o.subscriptionId);
    if (o.customer !== undefined) f = f.where('customer', '=', o.customer);
    if (o.status !== undefined) f = f.where('status', '=', o.status);
    return f;
  });
}
