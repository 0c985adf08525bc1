import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Mode } from '../db/schema.js';
import { createApiKey, revokeApiKey, type IssuedKey } from '../ledger/merchants/merchants.js';
import type { SecretBox } from '../security/secret-box.js';
import { keysetPage, pastCursor, type KeysetPage, type KeysetRequest } from './keyset-by-created.js';

// Merchant API keys: issue one (its secret answered once, never stored in clear), revoke one by its display prefix,
// list them (never a secret). Called by the CLI (`key create|revoke|list`) and the console alike.

export interface ApiKeyView {
  id: string;
  merchant_id: string;
  mode: Mode;
  key_prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export type CreateKeyResult = { kind: 'created'; key: IssuedKey & { created_at: Date } } | { kind: 'no_merchant' };

export async function issueApiKey(db: Db, box: SecretBox, merchantId: string, mode: Mode): Promise<CreateKeyResult> {
  const exists = await db.selectFrom('merchants').select('id').where('id', '=', merchantId).executeTakeFirst();
  if (!exists) return { kind: 'no_merchant' };
  const k = await createApiKey(db, box, merchantId, mode);
  const row = await db.selectFrom('api_keys').select('created_at').where('id', '=', k.id).executeTakeFirstOrThrow();
  return { kind: 'created', key: { ...k, created_at: row.created_at } };
}

/** The key with this display prefix (active or not); undefined when none. */
export function findApiKey(db: Db, prefix: string): Promise<ApiKeyView | undefined> {
  return db
    .selectFrom('api_keys')
    .select(['id', 'merchant_id', 'mode', 'key_prefix', 'created_at', 'last_used_at', 'revoked_at'])
    .where('key_prefix', '=', prefix)
    .executeTakeFirst();
}

/** Revokes the active key with this prefix; answers the revoked key, or undefined when no active key has it. */
export async function revokeApiKeyByPrefix(db: Db, prefix: string): Promise<ApiKeyView | undefined> {
  const n = await revokeApiKey(db, prefix);
  if (n === 0) return undefined;
  return findApiKey(db, prefix);
}

/** Newest first by default, keyset on (created_at, id); one merchant's keys or every merchant's. */
export async function listApiKeyPage(
  db: Db,
  f: { merchantId?: string | undefined; mode?: Mode | undefined },
  page: KeysetRequest,
): Promise<KeysetPage<ApiKeyView>> {
  let q = db
    .selectFrom('api_keys as k')
    .select(['k.id', 'k.merchant_id', 'k.mode', 'k.key_prefix', 'k.created_at', 'k.last_used_at', 'k.revoked_at']);
  if (f.merchantId !== undefined) q = q.where('k.merchant_id', '=', f.merchantId);
  if (f.mode !== undefined) q = q.where('k.mode', '=', f.mode);
  if (page.cursor !== undefined) q = q.where(pastCursor('api_keys', 'k', 'id', page.cursor, page.order));
  const rows = await q
    .orderBy(sql`k.created_at`, page.order)
    .orderBy('k.id', page.order)
    .limit(page.limit + 1)
    .execute();
  return keysetPage(rows, page.limit, (r) => r.id);
}
