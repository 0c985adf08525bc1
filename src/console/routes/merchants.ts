import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { invalidRequest, resourceNotFound } from '../../domain/errors.js';
import { SESSION_LIFETIME_RANGE, UNDERPAYMENT_TOLERANCE_BPS_RANGE, type MerchantSettings } from '../../ledger/merchants/merchants.js';
import {
  createMerchantAccount,
  effectiveSettings,
  findMerchant,
  listMerchantPage,
  sessionLifetimeDefault,
  updateMerchant,
} from '../../operations/merchants.js';
import { endpointSettings } from '../../operations/webhooks-endpoint.js';
import { assertOwns } from '../actor.js';
import {
  type ConsoleMerchant,
  type MerchantCreated,
  type MerchantList,
  merchantCreatedSchema,
  merchantListSchema,
  merchantSchema,
} from '../contract/merchants.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from '../route.js';
import { keysetOf, listQueryShape } from './keyset-query.js';
import { urlRefused } from './webhooks.js';

// The console's merchants: an operator lists, creates (test key and webhook secret answered once) and updates the
// payment settings of merchants (the CLI's `merchant` commands); a merchant user reads its own merchant only.

const idParam = z.strictObject({ id: z.string().regex(/^[A-Za-z0-9_]{1,255}$/) });

export async function registerMerchantRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { db, box, env } = deps.ops;
  const view = (m: MerchantSettings): ConsoleMerchant => {
    const e = effectiveSettings(m, sessionLifetimeDefault(env));
    return {
      id: e.merchant_id,
      name: e.name,
      webhook_url: e.webhook_url,
      created_at: e.created_at.toISOString(),
      session_lifetime_seconds: e.session_lifetime_seconds,
      session_lifetime_source: e.session_lifetime_source,
      underpayment_tolerance_bps: e.underpayment_tolerance_bps,
    };
  };

  consoleRoute(app, db, {
    method: 'GET',
    url: '/merchants',
    summary: 'Merchants',
    response: merchantListSchema,
    role: 'operator',
    query: z.strictObject(listQueryShape),
    async handler({ query }): Promise<MerchantList> {
      const page = await listMerchantPage(db, keysetOf(query, 'asc'));
      return { data: page.rows.map(view), next_cursor: page.nextCursor };
    },
  });

  consoleRoute(app, db, {
    method: 'GET',
    url: '/merchants/:id',
    summary: 'One merchant',
    response: merchantSchema,
    params: idParam,
    async handler({ actor, params }): Promise<ConsoleMerchant> {
      assertOwns(actor, params.id);
      const m = await findMerchant(db, params.id);
      if (!m) throw resourceNotFound('id', 'merchant');
      return view(m);
    },
  });

  consoleRoute(app, db, {
    method: 'POST',
    url: '/merchants',
    summary: 'Create a merchant (its API key secrets are shown once)',
    response: merchantCreatedSchema,
    status: [201],
    role: 'operator',
    errors: { 400: ['url_refused'] },
    body: z.strictObject({
      name: z.string().trim().min(1).max(200),
      webhook_url: z.string().max(2048).optional(),
      webhook_test_only: z.boolean().optional(),
    }),
    async handler({ body, audit, reply }): Promise<MerchantCreated> {
      const { policy } = endpointSettings(env);
      const r = await createMerchantAccount(
        db,
        box,
        { name: body.name, webhookUrl: body.webhook_url ?? null, testOnly: body.webhook_test_only === true },
        policy,
      );
      if (r.kind === 'refused') throw urlRefused(r.verdict, 'webhook_url');
      const k = r.testKey;
      await audit({
        action: 'merchant.create',
        objectType: 'merchant',
        objectId: r.merchant.merchant_id,
        merchantId: r.merchant.merchant_id,
        after: { name: r.merchant.name, webhook_url: r.merchant.webhook_url, test_key_prefix: k.key_prefix },
      });
      reply.code(201);
      return {
        merchant: view(r.merchant),
        test_key: {
          prefix: k.key_prefix,
          merchant_id: k.merchant_id,
          mode: k.mode,
          key: k.key,
          secret: k.secret,
          created_at: r.merchant.created_at.toISOString(),
        },
        webhook_secret: r.webhookSecret,
      };
    },
  });

  consoleRoute(app, db, {
    method: 'POST',
    url: '/merchants/:id/settings',
    summary: "Change a merchant's settings",
    response: merchantSchema,
    role: 'operator',
    errors: { 400: ['parameter_missing', 'url_refused'] },
    params: idParam,
    body: z.strictObject({
      session_lifetime_seconds: z.number().int().min(SESSION_LIFETIME_RANGE.min).max(SESSION_LIFETIME_RANGE.max).nullable().optional(),
      underpayment_tolerance_bps: z
        .number()
        .int()
        .min(UNDERPAYMENT_TOLERANCE_BPS_RANGE.min)
        .max(UNDERPAYMENT_TOLERANCE_BPS_RANGE.max)
        .optional(),
    }),
    async handler({ params, body, audit }): Promise<ConsoleMerchant> {
      if (body.session_lifetime_seconds === undefined && body.underpayment_tolerance_bps === undefined)
        throw invalidRequest(
          'parameter_missing',
          'Send session_lifetime_seconds or underpayment_tolerance_bps.',
          'session_lifetime_seconds',
        );
      const before = await findMerchant(db, params.id);
      if (!before) throw resourceNotFound('id', 'merchant');
      const after = await updateMerchant(db, params.id, {
        ...(body.session_lifetime_seconds !== undefined ? { sessionLifetimeSeconds: body.session_lifetime_seconds } : {}),
        ...(body.underpayment_tolerance_bps !== undefined ? { underpaymentToleranceBps: body.underpayment_tolerance_bps } : {}),
      });
      if (!after) throw resourceNotFound('id', 'merchant');
      const settings = (m: MerchantSettings) => ({
        session_lifetime_seconds: m.session_lifetime_seconds,
        underpayment_tolerance_bps: m.underpayment_tolerance_bps,
      });
      await audit({
        action: 'merchant.update',
        objectType: 'merchant',
        objectId: params.id,
        merchantId: params.id,
        before: settings(before),
        after: settings(after),
      });
      return view(after);
    },
  });
}
