import { z } from 'zod';

// The console's API keys area: GET /api/keys, POST /api/keys, POST /api/keys/:prefix/revoke. The shapes the routes
// answer with and the UI builds against (types only). A key's secret appears once, in the creation's answer.

const iso = z.string().meta({ description: 'ISO 8601 time.' });

/** One row of GET /api/keys?merchant_id&mode&cursor&limit (newest first). Never the secret. */
export const apiKeyRowSchema = z.strictObject({
  /** The display prefix (e.g. `sk_live_AbCdEfGh`): what revocation and the audit log name. */
  prefix: z.string(),
  merchant_id: z.string(),
  mode: z.enum(['test', 'live']),
  created_at: iso,
  last_used_at: iso.nullable(),
  revoked_at: iso.nullable(),
});
export type ApiKeyRow = z.infer<typeof apiKeyRowSchema>;

export const apiKeyListSchema = z.strictObject({ data: z.array(apiKeyRowSchema), next_cursor: z.string().nullable() });
export type ApiKeyList = z.infer<typeof apiKeyListSchema>;

/** POST /api/keys {mode, merchant_id (operator)}: the key and its secret, shown this once. */
export const apiKeyCreatedSchema = z.strictObject({
  prefix: z.string(),
  merchant_id: z.string(),
  mode: z.enum(['test', 'live']),
  key: z.string(),
  secret: z.string(),
  created_at: iso,
});
export type ApiKeyCreated = z.infer<typeof apiKeyCreatedSchema>;

/** POST /api/keys/:prefix/revoke (404 when no key has that prefix, 400 `api_key_revoked` when it is revoked already). */
export const apiKeyRevokedSchema = z.strictObject({ prefix: z.string(), merchant_id: z.string(), revoked_at: iso });
export type ApiKeyRevoked = z.infer<typeof apiKeyRevokedSchema>;
