import { sql, type Selectable, type Transaction } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database, InvoicesTable, Mode } from '../db/schema.js';
import { invoiceEventObject, type InvoiceEventType } from '../domain/events/invoice.js';
import { insertOutboxEvent } from './outbox.js';
import type { CursorListResult } from './subscriptions.js';

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

/** Same ordering and cursor rules as listSubscriptions: newest first by (created_at, id). */
export async function listInvoices(
  db: Db,
  merchantId: string,
  mode: Mode,
  o: {
    limit: number;
    startingAfter?: string;
    endingBefore?: string;
    subscriptionId?: string;
    customer?: string;
    status?: InvoiceStatusValue;
  },
): Promise<CursorListResult<InvoiceRow>> {
  const cursorId = o.startingAfter ?? o.endingBefore;
  let cursor: { created_at: Date; id: string } | undefined;
  if (cursorId !== undefined) {
    cursor = await db
      .selectFrom('invoices')
      .select(['created_at', 'id'])
      .where('id', '=', cursorId)
      .where('merchant_id', '=', merchantId)
      .where('mode', '=', mode)
      .executeTakeFirst();
    if (!cursor) return { kind: 'bad_cursor', param: o.startingAfter !== undefined ? 'starting_after' : 'ending_before' };
  }
  let q = db.selectFrom('invoices').selectAll().where('merchant_id', '=', merchantId).where('mode', '=', mode);
  if (o.subscriptionId !== undefined) q = q.where('subscription_id', '=', o.subscriptionId);
  if (o.customer !== undefined) q = q.where('customer', '=', o.customer);
  if (o.status !== undefined) q = q.where('status', '=', o.status);
  const backwards = o.startingAfter === undefined && o.endingBefore !== undefined;
  if (cursor) {
    // Compared in SQL against the stored row: created_at has microseconds, a JS Date only milliseconds.
    const at = sql`(select created_at, id from invoices where id = ${cursor.id})`;
    q = q.where(backwards ? sql<boolean>`(created_at, id) > ${at}` : sql<boolean>`(created_at, id) < ${at}`);
  }
  const dir = backwards ? 'asc' : 'desc';
  const rows = await q
    .orderBy('created_at', dir)
    .orderBy('id', dir)
    .limit(o.limit + 1)
    .execute();
  const page = rows.slice(0, o.limit);
  if (backwards) page.reverse();
  return { kind: 'page', page: { rows: page, hasMore: rows.length > o.limit } };
}
