import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { invalidRequest, resourceNotFound } from '../../domain/errors.js';
import { deliveryDetail, listDeliveries, type DeliveryView } from '../../operations/webhooks-deliveries.js';
import {
  OVERLAP_HOURS_RANGE,
  endpointSettings,
  rotateEndpointSecret,
  setWebhookEndpoint,
  webhookEndpoint,
} from '../../operations/webhooks-endpoint.js';
import { eventMerchant, resendEvent, resendFailedSince, withDeliveryQueue } from '../../operations/webhooks-resend.js';
import type { ApiError } from '../../domain/errors.js';
import { type ConsoleActor, assertOwns, merchantScope } from '../actor.js';
import {
  DELIVERY_STATUSES,
  type DeliveryDetail,
  type DeliveryList,
  type DeliveryRow,
  type ResendFailed,
  type ResendResult,
  type WebhookEndpoint,
  type WebhookEndpointSet,
  type WebhookSecretRotation,
  deliveryDetailSchema,
  deliveryListSchema,
  resendFailedSchema,
  resendResultSchema,
  webhookEndpointSchema,
  webhookEndpointSetSchema,
  webhookSecretRotationSchema,
} from '../contract/webhooks.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from '../route.js';
import { iso, isoTime, keysetOf, listQueryShape } from './keyset-query.js';

// The console's webhooks: a merchant's endpoint URL (the CLI's URL policy) and secret rotation (the new secret
// answered once), the delivery log with each attempt, and resends (one event, or every failure since a time).

const eventParam = z.strictObject({ event_id: z.string().regex(/^[A-Za-z0-9_]{1,255}$/) });

/** The endpoint rules' refusal as the console's 400. */
export function urlRefused(v: { mode: 'live' | 'test'; reason: string }, param: string): ApiError {
  const hint = v.mode === 'live' ? ' (mark it test-only for a URL that only test-mode events may use)' : '';
  return invalidRequest('url_refused', `Refused for ${v.mode} mode: ${v.reason}${hint}.`, param);
}

/** The merchant a per-merchant action applies to: a merchant user's own, an operator's named one. */
function oneMerchant(actor: ConsoleActor, requested: string | undefined): string {
  const m = merchantScope(actor, requested);
  if (m === undefined) throw invalidRequest('parameter_missing', 'Name the merchant (merchant_id).', 'merchant_id');
  return m;
}

const deliveryRow = (d: DeliveryView): DeliveryRow => ({
  event_id: d.event_id,
  merchant_id: d.merchant_id,
  mode: d.mode as 'test' | 'live',
  type: d.event_type,
  status: d.status,
  attempts: d.attempts,
  latency_ms: d.latency_ms,
  last_response_code: d.last_status_code,
  last_error: d.last_error,
  body_excerpt: d.response_excerpt,
  created_at: d.created_at.toISOString(),
  last_attempt_at: iso(d.last_attempt_at),
  delivered_at: iso(d.delivered_at),
  failed_at: iso(d.failed_at),
});

export async function registerWebhookRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { db, box, redis, redisPrefix, env } = deps.ops;
  const settings = () => endpointSettings(env);

  consoleRoute(app, db, {
    method: 'GET',
    url: '/webhooks/endpoint',
    summary: "A merchant's webhook endpoint",
    response: webhookEndpointSchema,
    errors: { 400: ['parameter_missing'] },
    query: z.strictObject({ merchant_id: z.string().optional() }),
    async handler({ actor, query }): Promise<WebhookEndpoint> {
      const e = await webhookEndpoint(db, box, oneMerchant(actor, query.merchant_id));
      if (!e) throw resourceNotFound('merchant_id', 'merchant');
      return {
        merchant_id: e.merchantId,
        url: e.url,
        secret_prefix: e.secretPrefix,
        previous_secret_expires_at: iso(e.previousSecretExpiresAt),
      };
    },
  });

  consoleRoute(app, db, {
    method: 'PUT',
    url: '/webhooks/endpoint',
    summary: 'Set or remove the webhook endpoint URL',
    response: webhookEndpointSetSchema,
    errors: { 400: ['parameter_missing', 'url_refused'] },
    body: z.strictObject({
      url: z.string().min(1).max(2048).nullable(),
      test_only: z.boolean().optional(),
      merchant_id: z.string().optional(),
    }),
    async handler({ actor, body, audit }): Promise<WebhookEndpointSet> {
      const merchantId = oneMerchant(actor, body.merchant_id);
      const before = await webhookEndpoint(db, box, merchantId);
      if (!before) throw resourceNotFound('merchant_id', 'merchant');
      const r = await setWebhookEndpoint(db, merchantId, { url: body.url, testOnly: body.test_only === true }, settings().policy);
      if (r.kind === 'refused') throw urlRefused(r.verdict, 'url');
      if (r.kind === 'no_merchant') throw resourceNotFound('merchant_id', 'merchant');
      const live = r.verdict?.ok ? r.verdict.live : null;
      await audit({
        action: 'webhook.set_url',
        objectType: 'merchant',
        objectId: merchantId,
        merchantId,
        before: { url: before.url },
        after: { url: r.url, test_only: body.test_only === true },
      });
      return {
        merchant_id: merchantId,
        url: r.url,
        live_deliverable: live?.ok ?? false,
        ...(live && !live.ok ? { live_refusal: live.reason } : {}),
      };
    },
  });

  consoleRoute(app, db, {
    method: 'POST',
    url: '/webhooks/rotate-secret',
    summary: 'Rotate the webhook secret (the new one is shown once)',
    response: webhookSecretRotationSchema,
    errors: { 400: ['parameter_missing'] },
    body: z.strictObject({
      overlap_hours: z.number().min(OVERLAP_HOURS_RANGE.min).max(OVERLAP_HOURS_RANGE.max).optional(),
      merchant_id: z.string().optional(),
    }),
    async handler({ actor, body, audit }): Promise<WebhookSecretRotation> {
      const merchantId = oneMerchant(actor, body.merchant_id);
      const overlap = body.overlap_hours ?? settings().secretOverlapHours;
      const r = await rotateEndpointSecret(db, box, merchantId, overlap);
      if (!r) throw resourceNotFound('merchant_id', 'merchant');
      await audit({
        action: 'webhook.rotate_secret',
        objectType: 'merchant',
        objectId: merchantId,
        merchantId,
        after: { overlap_hours: overlap, previous_secret_expires_at: iso(r.previousValidUntil) },
      });
      return { merchant_id: merchantId, secret: r.webhookSecret, previous_secret_expires_at: iso(r.previousValidUntil) };
    },
  });

  consoleRoute(app, db, {
    method: 'GET',
    url: '/webhooks/deliveries',
    summary: 'The webhook delivery log',
    response: deliveryListSchema,
    query: z.strictObject({
      ...listQueryShape,
      status: z.enum(DELIVERY_STATUSES).optional(),
      type: z.string().max(100).optional(),
      merchant_id: z.string().optional(),
      since: isoTime.optional(),
    }),
    async handler({ actor, query }): Promise<DeliveryList> {
      const merchantId = merchantScope(actor, query.merchant_id);
      const page = await listDeliveries(db, { merchantId, status: query.status, type: query.type, since: query.since }, keysetOf(query));
      return { data: page.rows.map(deliveryRow), next_cursor: page.nextCursor };
    },
  });

  consoleRoute(app, db, {
    method: 'GET',
    url: '/webhooks/deliveries/:event_id',
    summary: 'One delivery with its attempts',
    response: deliveryDetailSchema,
    params: eventParam,
    async handler({ actor, params }): Promise<DeliveryDetail> {
      const d = await deliveryDetail(db, params.event_id);
      if (!d) throw resourceNotFound('event_id', 'webhook delivery');
      assertOwns(actor, d.delivery.merchant_id);
      return {
        delivery: deliveryRow(d.delivery),
        generation: d.delivery.generation,
        next_attempt_at: d.delivery.status === 'pending' ? d.delivery.next_attempt_at.toISOString() : null,
        body: d.body,
        attempts: d.attempts.map((a) => ({ ...a, created_at: a.created_at.toISOString() })),
      };
    },
  });

  consoleRoute(app, db, {
    method: 'POST',
    url: '/webhooks/deliveries/:event_id/resend',
    summary: 'Resend one delivery',
    response: resendResultSchema,
    params: eventParam,
    async handler({ actor, params, audit }): Promise<ResendResult> {
      const merchantId = await eventMerchant(db, params.event_id);
      if (merchantId === undefined) throw resourceNotFound('event_id', 'webhook event');
      assertOwns(actor, merchantId);
      const r = await withDeliveryQueue(redis, redisPrefix, (q) => resendEvent(db, q, params.event_id));
      if (r.result === 'unknown_event') throw resourceNotFound('event_id', 'webhook event');
      await audit({
        action: 'webhook.resend',
        objectType: 'webhook_event',
        objectId: params.event_id,
        merchantId,
        after: { result: r.result, ...(r.result === 'resent' ? { generation: r.generation } : {}) },
      });
      return r;
    },
  });

  consoleRoute(app, db, {
    method: 'POST',
    url: '/webhooks/resend-failed',
    summary: 'Resend the failed deliveries since a time',
    response: resendFailedSchema,
    body: z.strictObject({ since: isoTime, merchant_id: z.string().optional(), include_skipped: z.boolean().optional() }),
    async handler({ actor, body, audit }): Promise<ResendFailed> {
      const merchantId = merchantScope(actor, body.merchant_id);
      const r = await withDeliveryQueue(redis, redisPrefix, (q) =>
        resendFailedSince(db, q, { since: body.since, merchantId, includeSkipped: body.include_skipped === true }),
      );
      await audit({
        action: 'webhook.resend_failed',
        objectType: 'webhook_event',
        merchantId: merchantId ?? null,
        after: { since: body.since.toISOString(), include_skipped: body.include_skipped === true, resent: r.resent },
        detail:
          r.events
            .map((e) => e.event_id)
            .join(',')
            .slice(0, 2000) || null,
      });
      return r;
    },
  });
}
