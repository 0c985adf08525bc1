import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Db } from '../../db/database.js';
import { parameterInvalid, resourceNotFound } from '../../domain/errors.js';
import { findInvoice, listInvoices, type InvoiceStatusValue } from '../../ledger/subscriptions/invoices.js';
import { refuseBadStrings, validate } from '../json-body.js';
import { serializeInvoice } from '../serializers/invoice.js';
import { cursorListQuery, listEnvelope, refuseBothCursors } from './cursor-list.js';

const INVOICE_STATUSES = ['draft', 'open', 'paid', 'void', 'uncollectible'] as const satisfies readonly InvoiceStatusValue[];

/** Query of GET /invoices (also the OpenAPI document's parameters). */
export const invoiceListQuery = cursorListQuery({
  subscription_id: z.string().min(1).max(255).optional(),
  customer: z.string().min(1).max(255).optional(),
  status: z.enum(INVOICE_STATUSES).optional(),
});

export function registerInvoiceRoutes(app: FastifyInstance, deps: { db: Db }): void {
  app.get('/invoices/:invoice_id', async (req) => {
    const auth = req.auth!;
    if (Object.keys((req.query ?? {}) as object).length > 0)
      throw parameterInvalid(Object.keys(req.query as object)[0]!, 'This endpoint takes no query parameters.');
    const id = (req.params as { invoice_id?: string }).invoice_id ?? '';
    const i = /^[A-Za-z0-9_]{1,255}$/.test(id) ? await findInvoice(deps.db, auth.merchantId, auth.mode, id) : undefined;
    if (!i) throw resourceNotFound('invoice_id', 'invoice');
    return serializeInvoice(i);
  });

  app.get('/invoices', async (req) => {
    const auth = req.auth!;
    const q = validate(invoiceListQuery, req.query);
    refuseBadStrings(q, []);
    refuseBothCursors(q);
    const r = await listInvoices(deps.db, auth.merchantId, auth.mode, {
      limit: q.limit,
      ...(q.starting_after !== undefined ? { startingAfter: q.starting_after } : {}),
      ...(q.ending_before !== undefined ? { endingBefore: q.ending_before } : {}),
      ...(q.subscription_id !== undefined ? { subscriptionId: q.subscription_id } : {}),
      ...(q.customer !== undefined ? { customer: q.customer } : {}),
      ...(q.status !== undefined ? { status: q.status } : {}),
    });
    if (r.kind === 'bad_cursor') throw parameterInvalid(r.param, `${r.param} must be the id of one of your invoices.`);
    return listEnvelope(req, r.page.rows.map(serializeInvoice), r.page.hasMore);
  });
}
