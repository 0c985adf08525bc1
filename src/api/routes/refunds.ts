import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Db } from '../../db/database.js';
import type { ChainLookup } from '../../domain/chain-lookup.js';
import { ApiError, invalidRequest, parameterInvalid, parameterMissing, parameterUnknown } from '../../domain/errors.js';
import { REFUND_REASONS } from '../../domain/refund-state.js';
import { hasIdShape } from '../../domain/ids.js';
import { requestFingerprint } from '../../ledger/core/idempotency.js';
import { isSubscriptionPayment, type RefundSubscriptionRefs } from '../serializers/refund.js';
import { actionIdempotency } from './idempotent-replay.js';
import { cancelRefund, createRefund, listRefunds, lookupRefund, type RefundRow } from '../../ledger/refunds/refunds.js';
import { jsonObjectBody, refuseAnyField, refuseBadStrings, validate } from '../json-body.js';
import { serializeRefund } from '../serializers/refund.js';
import { pageEnvelope, pageQuery, pageRequest, unknownPageCursor } from './query.js';

export interface RefundRouteDeps {
  db: Db;
  chains: ChainLookup;
  /** Called after a refund commits (enqueues its payout). Failures are logged; the payout sweep catches up. */
  onRefundCreated?: (r: RefundRow) => Promise<void>;
}

const metadataSchema = z
  .record(z.string().min(1).max(40), z.string().max(500))
  .refine((m) => Object.keys(m).length <= 50, 'at most 50 keys');

/**
 * The create-refund body as the OpenAPI document describes it. The route checks these fields one by one, in the
 * order and with the codes the spec gives (MISSING_CHARGE, MISSING_REFUND_ID, INVALID_AMOUNT, ...); the fields it
 * accepts are this schema's keys, so the two cannot list different fields.
 */
export const createRefundBody = z.strictObject({
  session_id: z.string().max(255).optional().meta({ description: 'The paid payment session (payment-session flow).' }),
  payment_id: z.string().max(255).optional().meta({ description: 'The pay_ payment (subscription flow), in place of session_id.' }),
  refund_id: z.string().min(1).max(255).meta({ description: 'Your own unique id for this refund; it is the idempotency key.' }),
  amount: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).meta({ description: 'Integer minor units (1 USDT = 100).' }),
  currency: z.string().meta({ description: 'USDT or USDC (case-insensitive): the coin the session was paid with.' }),
  reason: z.enum(REFUND_REASONS).optional(),
  description: z.string().max(1000).optional(),
  metadata: metadataSchema.optional(),
  destination_address: z.string().optional().meta({ description: 'Extension: where to pay the refund; default the payer.' }),
  deposit_id: z
    .string()
    .max(255)
    .optional()
    .meta({ description: 'Extension: pay back one unmatched deposit (in place of session_id and payment_id).' }),
});
const BODY_FIELDS = new Set(Object.keys(createRefundBody.shape));

/** Query of GET /refunds (also the OpenAPI document's parameters). */
export const refundListQuery = pageQuery({
  status: z.enum(['pending', 'processing', 'completed', 'failed', 'canceled']).optional(),
  session_id: z.string().max(255).optional(),
});

/** Refund API (spec: Refunds; decisions.md: Refunds). Codes keep the spec's spelling. */
export function registerRefundRoutes(app: FastifyInstance, deps: RefundRouteDeps): void {
  const render = (r: RefundRow, subscription?: RefundSubscriptionRefs) =>
    serializeRefund(r, (network, canonical) => deps.chains.displayAddress(network, r.mode, canonical), subscription);
  /** Refunds as the API shows them, with the invoice and subscription of those paying back a subscription payment. */
  const renderAll = async (rows: RefundRow[]) => {
    const refs = await subscriptionRefsOf(deps.db, rows.map((r) => r.session_id).filter(isSubscriptionPayment));
    return rows.map((r) => render(r, refs.get(r.session_id)));
  };

  app.post('/refunds/create', async (req, reply) => {
    const auth = req.auth!;
    const body = jsonObjectBody(req);
    for (const k of Object.keys(body)) if (!BODY_FIELDS.has(k)) throw parameterUnknown(k);

    const sessionId = optionalString(body, 'session_id');
    const paymentId = optionalString(body, 'payment_id');
    // Extension: deposit_id pays back one unmatched deposit (docs/refunds.md, "Money back to customers").
    const depositId = optionalString(body, 'deposit_id');
    if (depositId !== undefined && paymentId !== undefined)
      throw parameterInvalid('deposit_id', 'Give deposit_id or payment_id, not both.');
    if (!sessionId && !paymentId && !depositId)
      throw invalidRequest('MISSING_CHARGE', 'Give the session_id of the paid payment session.', 'session_id');
    const refundId = optionalString(body, 'refund_id');
    if (!refundId) throw invalidRequest('MISSING_REFUND_ID', 'Give refund_id, your own unique id for this refund.', 'refund_id');
    if (refundId.length > 255) throw parameterInvalid('refund_id', 'refund_id must be at most 255 characters.');
    if (body.amount === undefined) throw parameterMissing('amount');
    if (typeof body.amount !== 'number' || !Number.isSafeInteger(body.amount) || body.amount <= 0) {
      throw invalidRequest('INVALID_AMOUNT', 'amount must be a positive integer in minimum currency units (1 USDT = 100).', 'amount');
    }
    if (body.currency === undefined) throw parameterMissing('currency');
    const currency = typeof body.currency === 'string' ? body.currency.toUpperCase() : '';
    if (currency !== 'USDT' && currency !== 'USDC') throw invalidRequest('INVALID_CURRENCY', 'currency must be USDT or USDC.', 'currency');
    const reason = optionalString(body, 'reason');
    if (reason !== undefined && !(REFUND_REASONS as readonly string[]).includes(reason)) {
      throw parameterInvalid('reason', `reason must be one of ${REFUND_REASONS.join(', ')}.`);
    }
    const description = optionalString(body, 'description');
    if (description !== undefined && description.length > 1000)
      throw parameterInvalid('description', 'description must be at most 1000 characters.');
    const metadata = body.metadata === undefined ? {} : validateMetadata(body.metadata);
    const destination = optionalString(body, 'destination_address');

    // Subscription flow (decisions.md): a payment (pay_) is the payment-session record behind one invoice.
    const subscriptionRefs = paymentId && !sessionId ? await paymentRefs(deps.db, paymentId) : undefined;
    const result = await createRefund(deps.db, deps.chains, {
      merchantId: auth.merchantId,
      mode: auth.mode,
      refundId,
      sessionId: sessionId ?? paymentId ?? null,
      depositId: depositId ?? null,
      amountMinor: BigInt(body.amount),
      currency,
      reason: reason ?? null,
      description: description ?? null,
      metadata,
      destinationAddress: destination ?? null,
      fingerprint: requestFingerprint(body),
    });
    if (result.kind === 'created' && deps.onRefundCreated) {
      deps
        .onRefundCreated(result.refund)
        .catch((err: unknown) => req.log.warn({ err, refund: result.refund.id }, 'payout enqueue failed; the sweep will pick it up'));
    }
    if (result.kind === 'replayed') reply.header('Idempotent-Replayed', 'true');
    return reply.code(201).send(subscriptionRefs ? render(result.refund, subscriptionRefs) : (await renderAll([result.refund]))[0]);
  });

  app.get('/refunds/:refund_id', async (req) => (await renderAll([await ownRefund(req)]))[0]);

  // Idempotency-Key (an extension, docs/errors.md "Retrying safely"): a retry gets the stored answer again.
  app.post('/refunds/:refund_id/cancel', async (req, reply) => {
    const body = jsonObjectBody(req);
    refuseAnyField(body); // no body or `{}` (decisions.md: unknown fields are refused)
    const refund = await ownRefund(req);
    const idem = actionIdempotency(deps.db, req, 'refunds.cancel', refund.id, body);
    const earlier = await idem?.replay(reply);
    if (earlier) return earlier;
    const r = await cancelRefund(deps.db, refund, idem && ((trx, canceled) => idem.store(trx, cancellation(canceled))));
    if (r.kind === 'not_cancelable') {
      const twin = await idem?.replay(reply); // a twin with the same key canceled it first
      if (twin) return twin;
      throw invalidRequest(
        'CANNOT_CANCEL_REFUND',
        `A refund in status ${r.refund.status}${r.refund.signed_at ? ' whose payout was signed' : ''} cannot be canceled.`,
        'refund_id',
      );
    }
    return cancellation(r.refund);
  });

  app.get('/refunds', async (req) => {
    const auth = req.auth!;
    refuseBadStrings(req.query);
    const q = validate(refundListQuery, req.query);
    const p = pageRequest(q, 're');
    const page = await listRefunds(deps.db, auth.merchantId, auth.mode, {
      offset: p.offset,
      limit: p.page_size,
      after: p.after,
      status: q.status,
      sessionId: q.session_id,
    });
    if (!page) throw unknownPageCursor();
    return pageEnvelope(p, await renderAll(page.rows), page.total, page.position, page.rows.at(-1)?.id);
  });

  async function ownRefund(req: FastifyRequest): Promise<RefundRow> {
    const auth = req.auth!;
    const id = (req.params as { refund_id?: string }).refund_id ?? '';
    if (id.length === 0 || id.length > 255 || id.includes('\u0000'))
      throw new ApiError(404, 'invalid_request_error', 'REFUND_NOT_FOUND', 'No such refund.', 'refund_id');
    const r = await lookupRefund(deps.db, auth.merchantId, auth.mode, id);
    switch (r.kind) {
      case 'found':
        return r.refund;
      case 'forbidden':
        throw new ApiError(403, 'permission_error', 'FORBIDDEN', 'This refund is not accessible with this API key.', 'refund_id');
      case 'not_found':
        throw new ApiError(404, 'invalid_request_error', 'REFUND_NOT_FOUND', 'No such refund.', 'refund_id');
    }
  }
}

function optionalString(body: Record<string, unknown>, key: string): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw parameterInvalid(key, `${key} must be a string.`);
  return v === '' ? undefined : v;
}

function validateMetadata(v: unknown): Record<string, string> {
  return validate(z.object({ metadata: metadataSchema }), { metadata: v }).metadata;
}

/** The invoice and subscription behind each of these subscription payments (pay_ ids), in one query. */
async function subscriptionRefsOf(db: Db, paymentIds: string[]): Promise<Map<string, RefundSubscriptionRefs>> {
  if (paymentIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('subscription_charges')
    .select(['payment_id', 'invoice_id', 'subscription_id'])
    .where('payment_id', 'in', [...new Set(paymentIds)])
    .execute();
  return new Map(rows.map((r) => [r.payment_id!, { invoice_id: r.invoice_id, subscription_id: r.subscription_id }]));
}

/** The invoice and subscription behind a subscription payment; 404 SESSION_NOT_FOUND when there is none. */
async function paymentRefs(db: Db, paymentId: string): Promise<{ invoice_id: string; subscription_id: string }> {
  const notFound = () => new ApiError(404, 'invalid_request_error', 'SESSION_NOT_FOUND', 'No such payment.', 'payment_id');
  if (!hasIdShape(paymentId, 'pay')) throw notFound();
  const row = await db
    .selectFrom('subscription_charges')
    .select(['invoice_id', 'subscription_id'])
    .where('payment_id', '=', paymentId)
    .executeTakeFirst();
  if (!row) throw notFound();
  return row;
}

/** The refund cancel's answer (interface.md: `refund_id`, `status`, `canceled_at`). */
function cancellation(r: RefundRow) {
  return { refund_id: r.refund_id, status: r.status, canceled_at: Math.floor(r.canceled_at!.getTime() / 1000) };
}
