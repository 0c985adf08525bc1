import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Db } from '../../db/database.js';
import type { SubscriptionStatusValue } from '../../db/schema.js';
import { invalidAmount, invalidRequest, parameterInvalid, resourceNotFound } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import { isIdempotencyKeyTaken, requestFingerprint, storeResponse, type IdempotencyScope } from '../../ledger/core/idempotency.js';
import { findInvoice } from '../../ledger/subscriptions/invoices.js';
import { findPaymentMethod } from '../../ledger/subscriptions/payment-methods.js';
import {
  CANCELLATION_REASONS,
  SUBSCRIPTION_STATUSES,
  cancelSubscription,
  findSubscription,
  insertSubscription,
  listSubscriptions,
  type SubscriptionRow,
} from '../../ledger/subscriptions/subscriptions.js';
import { systemClock, type Clock } from '../../domain/clock.js';
import { DEFAULT_SUBSCRIPTION_SETTINGS, type SubscriptionSettings } from '../../domain/subscription-settings.js';
import { jsonObjectBody, refuseBadStrings, validate } from '../json-body.js';
import { serializeCancellation, serializeSubscription } from '../serializers/subscription.js';
import { cursorListQuery, listEnvelope, refuseBothCursors } from './cursor-list.js';
import { idempotencyKeyOf } from './query.js';
import { actionIdempotency, replayStored } from './idempotent-replay.js';

export interface SubscriptionRouteDeps {
  db: Db;
  checkoutBaseUrl: string;
  clock?: Clock;
  settings?: SubscriptionSettings;
}

const IDEMPOTENCY_SCOPE = 'subscriptions.create';
const MAX_UNIX = 253_402_300_799; // 9999-12-31
const metadata = z.record(z.string().min(1).max(40), z.string().max(500)).refine((m) => Object.keys(m).length <= 50, 'at most 50 keys');
const text = (max: number) => z.string().min(1).max(max);
const unixSeconds = z.number().int().min(1).max(MAX_UNIX);

/** The create-subscription body (also the OpenAPI document's `CreateSubscriptionRequest`). */
export const createSubscriptionBody = z.strictObject({
  items: z
    .array(
      z.strictObject({
        price_data: z.strictObject({
          price_id: text(255),
          currency: z.string().regex(/^usd$/i, 'must be USD'),
          product: text(255),
          unit_amount: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
          recurring: z.strictObject({ interval: z.enum(['day', 'week', 'month', 'year']) }),
        }),
        quantity: z.number().int().min(1).max(10_000).optional(),
        metadata: metadata.optional(),
      }),
    )
    .length(1, 'exactly one item is supported'),
  customer: text(255),
  customer_email: z.string().email().max(320).optional(),
  customer_phone: text(40).optional(),
  customer_name: text(255).optional(),
  currency: z.string().regex(/^usd$/i, 'must be USD').optional(),
  description: z.string().max(1000).optional(),
  success_url: z.string().url().max(2048).optional(),
  cancel_url: z.string().url().max(2048).optional(),
  trial_end: unixSeconds.optional(),
  billing_cycle_anchor: unixSeconds.optional(),
  cancel_at: unixSeconds.optional(),
  iterations: z.number().int().min(1).max(1000).optional(),
  metadata: metadata.optional(),
});

/** The cancel-subscription body. */
export const cancelSubscriptionBody = z.strictObject({
  cancel_at_period_end: z.boolean().optional(),
  cancellation_reason: z.enum(CANCELLATION_REASONS).optional(),
  cancellation_comment: z.string().max(1000).optional(),
});

export const EXPANDABLE_FIELDS = ['latest_invoice', 'customer', 'payment_method'] as const;
const EXPANDABLE = new Set<string>(EXPANDABLE_FIELDS);

/** Query of GET /subscriptions (also the OpenAPI document's parameters). */
export const subscriptionListQuery = cursorListQuery({
  customer: z.string().min(1).max(255).optional(),
  status: z.enum(SUBSCRIPTION_STATUSES as [SubscriptionStatusValue, ...SubscriptionStatusValue[]]).optional(),
});

export function registerSubscriptionRoutes(app: FastifyInstance, deps: SubscriptionRouteDeps): void {
  const clock = deps.clock ?? systemClock;
  const settings = deps.settings ?? DEFAULT_SUBSCRIPTION_SETTINGS;
  const render = (s: SubscriptionRow) => serializeSubscription(s, deps.checkoutBaseUrl);

  app.post('/subscriptions/create', async (req, reply) => {
    const auth = req.auth!;
    const body = jsonObjectBody(req);
    const key = idempotencyKeyOf(req);
    const scope: IdempotencyScope | undefined = key
      ? { merchantId: auth.merchantId, mode: auth.mode, scope: IDEMPOTENCY_SCOPE, key }
      : undefined;
    const fingerprint = requestFingerprint(body);
    if (scope) {
      const replay = await replayStored(deps.db, scope, fingerprint, reply);
      if (replay) return replay;
    }
    const input = validate(createSubscriptionBody, body, new Set(['unit_amount']));
    if (input.cancel_at !== undefined && input.iterations !== undefined) {
      throw parameterInvalid('cancel_at', 'cancel_at and iterations are mutually exclusive; send one of them.');
    }
    const nowSec = Math.floor(clock.now().getTime() / 1000);
    for (const f of ['trial_end', 'billing_cycle_anchor', 'cancel_at'] as const) {
      const v = input[f];
      if (v !== undefined && v <= nowSec) throw parameterInvalid(f, `${f} must be in the future (Unix seconds).`);
    }
    if (input.cancel_at !== undefined && input.trial_end !== undefined && input.cancel_at <= input.trial_end) {
      throw parameterInvalid('cancel_at', 'cancel_at must be after trial_end.');
    }
    const item = input.items[0]!;
    const unitAmount = BigInt(item.price_data.unit_amount);
    const quantity = item.quantity ?? 1;
    if (unitAmount * BigInt(quantity) > 100_000_000_000n)
      throw invalidAmount('items[0][price_data][unit_amount]', 'price × quantity is above 1,000,000,000.00 per period');
    const at = (v: number | undefined) => (v === undefined ? null : new Date(v * 1000));
    try {
      const payload = await deps.db.transaction().execute(async (trx) => {
        const row = await insertSubscription(
          trx,
          {
            id: newId('sub'),
            merchantId: auth.merchantId,
            mode: auth.mode,
            customer: input.customer,
            customerEmail: input.customer_email ?? null,
            customerPhone: input.customer_phone ?? null,
            customerName: input.customer_name ?? null,
            currency: 'USD',
            description: input.description ?? null,
            priceId: item.price_data.price_id,
            product: item.price_data.product,
            unitAmountMinor: unitAmount,
            interval: item.price_data.recurring.interval,
            quantity,
            itemMetadata: item.metadata ?? {},
            successUrl: input.success_url ?? null,
            cancelUrl: input.cancel_url ?? null,
            trialEnd: at(input.trial_end),
            billingCycleAnchor: at(input.billing_cycle_anchor),
            cancelAt: at(input.cancel_at),
            iterations: input.iterations ?? null,
            metadata: input.metadata ?? {},
          },
          { clock, incompleteExpiryMs: settings.incompleteExpiryMs, checkoutBaseUrl: deps.checkoutBaseUrl },
        );
        const payload = JSON.stringify(render(row));
        if (scope) await storeResponse(trx, scope, { requestHash: fingerprint, status: 200, body: payload });
        return payload;
      });
      return reply.code(200).type('application/json').send(payload);
    } catch (err) {
      if (scope && isIdempotencyKeyTaken(err)) {
        const replay = await replayStored(deps.db, scope, fingerprint, reply);
        if (replay) return replay;
      }
      throw err;
    }
  });

  app.get('/subscriptions/:subscription_id', async (req) => {
    const auth = req.auth!;
    const s = await subscriptionOr404(req);
    const expand = parseExpand(req.query);
    const latestInvoice = expand.has('latest_invoice')
      ? s.latest_invoice_id
        ? ((await findInvoice(deps.db, auth.merchantId, auth.mode, s.latest_invoice_id)) ?? null)
        : null
      : undefined;
    const paymentMethod = expand.has('payment_method')
      ? s.payment_method_id
        ? ((await findPaymentMethod(deps.db, auth.merchantId, auth.mode, s.payment_method_id)) ?? null)
        : null
      : undefined;
    return serializeSubscription(s, deps.checkoutBaseUrl, {
      ...(latestInvoice !== undefined ? { latestInvoice } : {}),
      ...(paymentMethod !== undefined ? { paymentMethod } : {}),
      customer: expand.has('customer'),
    });
  });

  app.get('/subscriptions', async (req) => {
    const auth = req.auth!;
    const q = validate(subscriptionListQuery, req.query);
    refuseBadStrings(q, []);
    refuseBothCursors(q);
    const r = await listSubscriptions(deps.db, auth.merchantId, auth.mode, {
      limit: q.limit,
      ...(q.starting_after !== undefined ? { startingAfter: q.starting_after } : {}),
      ...(q.ending_before !== undefined ? { endingBefore: q.ending_before } : {}),
      ...(q.customer !== undefined ? { customer: q.customer } : {}),
      ...(q.status !== undefined ? { status: q.status } : {}),
    });
    if (r.kind === 'bad_cursor') throw parameterInvalid(r.param, `${r.param} must be the id of one of your subscriptions.`);
    return listEnvelope(req, r.page.rows.map(render), r.page.hasMore);
  });

  // Idempotency-Key (an extension, docs/errors.md "Retrying safely"): a retry gets the stored answer again.
  app.post('/subscriptions/:subscription_id/cancel', async (req, reply) => {
    const raw = jsonObjectBody(req);
    const body = validate(cancelSubscriptionBody, raw);
    const s = await subscriptionOr404(req);
    const idem = actionIdempotency(deps.db, req, 'subscriptions.cancel', s.id, raw);
    const earlier = await idem?.replay(reply);
    if (earlier) return earlier;
    const r = await cancelSubscription(deps.db, s.id, {
      atPeriodEnd: body.cancel_at_period_end ?? false,
      reason: body.cancellation_reason ?? null,
      comment: body.cancellation_comment ?? null,
      clock,
      checkoutBaseUrl: deps.checkoutBaseUrl,
      ...(idem ? { onChanged: (trx, changed) => idem.store(trx, serializeCancellation(changed)) } : {}),
    });
    switch (r.kind) {
      case 'canceled':
      case 'scheduled':
        return serializeCancellation(r.subscription);
      case 'not_cancelable': {
        const twin = await idem?.replay(reply); // a twin with the same key canceled it first
        if (twin) return twin;
        throw invalidRequest(
          'subscription_not_cancelable',
          `A subscription in status ${r.subscription.status} cannot be canceled.`,
          'subscription_id',
        );
      }
      case 'no_period':
        throw parameterInvalid('cancel_at_period_end', 'This subscription has no current period yet; cancel it now instead.');
    }
  });

  async function subscriptionOr404(req: FastifyRequest): Promise<SubscriptionRow> {
    const auth = req.auth!;
    const id = (req.params as { subscription_id?: string }).subscription_id ?? '';
    if (!/^[A-Za-z0-9_]{1,255}$/.test(id)) throw resourceNotFound('subscription_id', 'subscription');
    const s = await findSubscription(deps.db, auth.merchantId, auth.mode, id);
    if (!s) throw resourceNotFound('subscription_id', 'subscription');
    return s;
  }
}

/** `expand` as a string, a comma list, repeated keys or `expand[]`; each value must be expandable. */
function parseExpand(query: unknown): Set<string> {
  const q = (query ?? {}) as Record<string, unknown>;
  for (const k of Object.keys(q))
    if (k !== 'expand' && k !== 'expand[]') throw invalidRequest('parameter_unknown', `Received unknown parameter: ${k}.`, k);
  const raw = [q.expand, q['expand[]']].flat().filter((v) => v !== undefined);
  const out = new Set<string>();
  for (const v of raw) {
    if (typeof v !== 'string') throw parameterInvalid('expand', 'expand must be a string or an array of strings.');
    for (const part of v
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      if (!EXPANDABLE.has(part)) throw parameterInvalid('expand', `expand values: ${[...EXPANDABLE].join(', ')}.`);
      out.add(part);
    }
  }
  return out;
}
