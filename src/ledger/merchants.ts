import type { Db } from '../db/database.js';
import type { Mode } from '../db/schema.js';
import { newId } from '../domain/ids.js';
import { generateKeyMaterial, generateWebhookSecret, hashApiKey } from '../security/api-key-material.js';
import type { SecretBox } from '../security/secret-box.js';

// Merchants and their API keys. Keys are stored as SHA-256 hashes; secrets sealed under the master key.

export const apiKeySecretAad = (keyId: string): string => `api_keys:${keyId}:secret`;
export const webhookSecretAad = (merchantId: string): string => `merchants:${merchantId}:webhook_secret`;

export interface IssuedKey {
  id: string;
  merchant_id: string;
  mode: Mode;
  key: string;
  key_prefix: string;
  secret: string;
}

export async function createMerchant(
  db: Db,
  box: SecretBox,
  input: { name: string; webhookUrl?: string | null },
): Promise<{ merchantId: string; webhookSecret: string; testKey: IssuedKey }> {
  const merchantId = newId('mch');
  const webhookSecret = generateWebhookSecret();
  const testKey = await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('merchants')
      .values({
        id: merchantId,
        name: input.name,
        webhook_url: input.webhookUrl ?? null,
        webhook_secret_enc: box.seal(webhookSecret, webhookSecretAad(merchantId)),
      })
      .execute();
    await trx
      .insertInto('merchant_hd_accounts')
      .values([{ merchant_id: merchantId, mode: 'test' }, { merchant_id: merchantId, mode: 'live' }])
      .execute();
    return insertKey(trx, box, merchantId, 'test');
  });
  return { merchantId, webhookSecret, testKey };
}

export async function createApiKey(db: Db, box: SecretBox, merchantId: string, mode: Mode): Promise<IssuedKey> {
  const merchant = await db.selectFrom('merchants').select('id').where('id', '=', merchantId).executeTakeFirst();
  if (!merchant) throw new Error(`no merchant ${merchantId}`);
  return insertKey(db, box, merchantId, mode);
}

async function insertKey(db: Pick<Db, 'insertInto'>, box: SecretBox, merchantId: string, mode: Mode): Promise<IssuedKey> {
  const m = generateKeyMaterial(mode);
  const id = newId('key');
  await db
    .insertInto('api_keys')
    .values({
      id,
      merchant_id: merchantId,
      mode,
      key_prefix: m.prefix,
      key_hash: m.hash,
      secret_enc: box.seal(m.secret, apiKeySecretAad(id)),
    })
    .execute();
  return { id, merchant_id: merchantId, mode, key: m.key, key_prefix: m.prefix, secret: m.secret };
}

/** Revokes by display prefix; answers how many keys it revoked (0 when unknown or already revoked). */
export async function revokeApiKey(db: Db, prefix: string): Promise<number> {
  const r = await db
    .updateTable('api_keys')
    .set({ revoked_at: new Date() })
    .where('key_prefix', '=', prefix)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export async function listApiKeys(db: Db, merchantId?: string) {
  let q = db
    .selectFrom('api_keys')
    .select(['id', 'merchant_id', 'mode', 'key_prefix', 'created_at', 'revoked_at', 'last_used_at'])
    .orderBy('created_at');
  if (merchantId) q = q.where('merchant_id', '=', merchantId);
  return q.execute();
}

export interface ResolvedKey {
  keyId: string;
  merchantId: string;
  mode: Mode;
  secret: string;
}

/** The active key with this plaintext value, its secret decrypted; undefined when unknown or revoked. */
export async function resolveApiKey(db: Db, box: SecretBox, key: string): Promise<ResolvedKey | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .select(['id', 'merchant_id', 'mode', 'secret_enc'])
    .where('key_hash', '=', hashApiKey(key))
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  return { keyId: row.id, merchantId: row.merchant_id, mode: row.mode, secret: box.open(row.secret_enc, apiKeySecretAad(row.id)) };
}
