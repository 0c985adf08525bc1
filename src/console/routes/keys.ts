import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { invalidRequest, resourceNotFound } from '../../domain/errors.js';
import { findApiKey, issueApiKey, listApiKeyPage, revokeApiKeyByPrefix, type ApiKeyView } from '../../operations/api-keys.js';
import { assertOwns, merchantScope } from '../actor.js';
import {
  type ApiKeyCreated,
  type ApiKeyList,
  type ApiKeyRevoked,
  type ApiKeyRow,
  apiKeyCreatedSchema,
  apiKeyListSchema,
  apiKeyRevokedSchema,
} from '../contract/keys.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from '../route.js';
import { iso, keysetOf, listQueryShape } from './keyset-query.js';

// The console's API keys: list (never a secret), create (the secret answered once), revoke by prefix. A merchant user
// sees and touches its own merchant's keys only. Audit rows name a key by its prefix, never its secret.

const mode = z.enum(['test', 'live']);
const prefixParam = z.strictObject({ prefix: z.string().regex(/^[A-Za-z0-9_]{1,64}$/) });

const row = (k: ApiKeyView): ApiKeyRow => ({
  prefix: k.key_prefix,
  merchant_id: k.merchant_id,
  mode: k.mode,
  created_at: k.created_at.toISOString(),
  last_used_at: iso(k.last_used_at),
  revoked_at: iso(k.revoked_at),
});

export async function registerKeyRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { db, box } = deps.ops;

  consoleRoute(app, db, {
    method: 'GET',
    url: '/keys',
    summary: "A merchant's API keys (prefix, mode, created, last used)",
    response: apiKeyListSchema,
    query: z.strictObject({ ...listQueryShape, merchant_id: z.string().optional(), mode: mode.optional() }),
    async handler({ actor, query }): Promise<ApiKeyList> {
      const merchantId = merchantScope(actor, query.merchant_id);
      const page = await listApiKeyPage(db, { merchantId, mode: query.mode }, keysetOf(query));
      return { data: page.rows.map(row), next_cursor: page.nextCursor };
    },
  });

  consoleRoute(app, db, {
    method: 'POST',
    url: '/keys',
    summary: 'Create an API key (its secret is shown once)',
    response: apiKeyCreatedSchema,
    status: [201],
    errors: { 400: ['parameter_missing'] },
    body: z.strictObject({ mode, merchant_id: z.string().min(1).max(255).optional() }),
    async handler({ actor, body, audit, reply }): Promise<ApiKeyCreated> {
      const merchantId = merchantScope(actor, body.merchant_id);
      if (merchantId === undefined) throw invalidRequest('parameter_missing', 'Name the merchant (merchant_id).', 'merchant_id');
      const r = await issueApiKey(db, box, merchantId, body.mode);
      if (r.kind === 'no_merchant') throw resourceNotFound('merchant_id', 'merchant');
      const k = r.key;
      await audit({
        action: 'api_key.create',
        objectType: 'api_key',
        objectId: k.key_prefix,
        merchantId,
        after: { prefix: k.key_prefix, mode: k.mode },
      });
      reply.code(201);
      return {
        prefix: k.key_prefix,
        merchant_id: k.merchant_id,
        mode: k.mode,
        key: k.key,
        secret: k.secret,
        created_at: k.created_at.toISOString(),
      };
    },
  });

  consoleRoute(app, db, {
    method: 'POST',
    url: '/keys/:prefix/revoke',
    summary: 'Revoke an API key',
    response: apiKeyRevokedSchema,
    errors: { 400: ['api_key_revoked'] },
    params: prefixParam,
    async handler({ actor, params, audit }): Promise<ApiKeyRevoked> {
      const key = await findApiKey(db, params.prefix);
      if (!key) throw resourceNotFound('prefix', 'API key');
      assertOwns(actor, key.merchant_id);
      if (key.revoked_at !== null) throw invalidRequest('api_key_revoked', `The key ${key.key_prefix} is revoked already.`, 'prefix');
      const revoked = await revokeApiKeyByPrefix(db, key.key_prefix);
      if (!revoked?.revoked_at) throw invalidRequest('api_key_revoked', `The key ${key.key_prefix} is revoked already.`, 'prefix');
      await audit({
        action: 'api_key.revoke',
        objectType: 'api_key',
        objectId: key.key_prefix,
        merchantId: key.merchant_id,
        before: { revoked_at: null },
        after: { revoked_at: revoked.revoked_at.toISOString() },
      });
      return { prefix: key.key_prefix, merchant_id: key.merchant_id, revoked_at: revoked.revoked_at.toISOString() };
    },
  });
}
