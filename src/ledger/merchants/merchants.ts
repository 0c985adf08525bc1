import type { Db } from '../../db/database.js';
import type { Mode } from '../../db/schema.js';
import { newId } from '../../domain/ids.js';
import { generateKeyMaterial, generateWebhookSecret, hashApiKey } from '../../security/api-key-material.js';
import { apiKeySecretAad, webhookSecretAad } from '../../security/sealed-column-aad.js';
import type { SecretBox } from '../../security/secret-box.js';

// Merchants and their API keys. Keys are stored as SHA-256 hashes; secrets sealed under the master key.

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
      .values([
        { merchant_id: merchantId, mode: 'test' },
        { merchant_id: merchantId, mode: 'live' },
      ])
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

/** Bounds of the per-merchant settings; the database checks the same (migration 2026_11_24_0200). */
export const SESSION_LIFETIME_RANGE = { min: 60, max: 604_800 } as const;
export const UNDERPAYMENT_TOLERANCE_BPS_RANGE = { min: 0, max: 10_000 } as const;

export interface MerchantSettings {
  merchant_id: string;
  name: string;
  webhook_url: string | null;
  created_at: Date;
  /** The merchant's own lifetime; null means the deployment's SESSION_LIFETIME_SECONDS. */
  session_lifetime_seconds: number | null;
  underpayment_tolerance_bps: number;
}

export interface MerchantSettingsUpdate {
  /** null returns the merchant to the deployment's default. */
  sessionLifetimeSeconds?: number | null;
  underpaymentToleranceBps?: number;
}

function inRange(v: number, r: { min: number; max: number }): boolean {
  return Number.isSafeInteger(v) && v >= r.min && v <= r.max;
}

/** The one writer of a merchant's payment settings; answers undefined for an unknown merchant. */
export async function updateMerchantSettings(db: Db, merchantId: string, u: MerchantSettingsUpdate): Promise<MerchantSettings | undefined> {
  if (u.sessionLifetimeSeconds != null && !inRange(u.sessionLifetimeSeconds, SESSION_LIFETIME_RANGE)) {
    throw new RangeError(`session lifetime must be ${SESSION_LIFETIME_RANGE.min}..${SESSION_LIFETIME_RANGE.max} seconds`);
  }
  if (u.underpaymentToleranceBps !== undefined && !inRange(u.underpaymentToleranceBps, UNDERPAYMENT_TOLERANCE_BPS_RANGE)) {
    throw new RangeError(
      `underpayment tolerance must be ${UNDERPAYMENT_TOLERANCE_BPS_RANGE.min}..${UNDERPAYMENT_TOLERANCE_BPS_RANGE.max} basis points`,
    );
  }
  const set = {
    ...(u.sessionLifetimeSeconds !== undefined ? { session_lifetime_seconds: u.sessionLifetimeSeconds } : {}),
    ...(u.underpaymentToleranceBps !== undefined ? { underpayment_tolerance_bps: u.underpaymentToleranceBps } : {}),
  };
  if (Object.keys(set).length === 0) return (await listMerchantSettings(db, merchantId))[0];
  const row = await db
    .updateTable('merchants')
    .set(set)
    .where('id', '=', merchantId)
    .returning(MERCHANT_SETTINGS_COLUMNS)
    .executeTakeFirst();
  return row ? toSettings(row) : undefined;
}

const MERCHANT_SETTINGS_COLUMNS = [
  'id',
  'name',
  'webhook_url',
  'created_at',
  'session_lifetime_seconds',
  'underpayment_tolerance_bps',
] as const;

function toSettings(r: {
  id: string;
  name: string;
  webhook_url: string | null;
  created_at: Date;
  session_lifetime_seconds: number | null;
  underpayment_tolerance_bps: number;
}): MerchantSettings {
  return {
    merchant_id: r.id,
    name: r.name,
    webhook_url: r.webhook_url,
    created_at: r.created_at,
    session_lifetime_seconds: r.session_lifetime_seconds,
    underpayment_tolerance_bps: r.underpayment_tolerance_bps,
  };
}

/** Every merchant's settings, oldest first, or one merchant's. */
export async function listMerchantSettings(db: Db, merchantId?: string): Promise<MerchantSettings[]> {
  let q = db.selectFrom('merchants').select(MERCHANT_SETTINGS_COLUMNS).orderBy('created_at').orderBy('id');
  if (merchantId !== undefined) q = q.where('id', '=', merchantId);
  return (await q.execute()).map(toSettings);
}

/** The BIP44 account index of a merchant in a mode: which hot wallets are theirs. */
export async function merchantAccountIndex(db: Db, merchantId: string, mode: Mode): Promise<number> {
  const row = await db
    .selectFrom('merchant_hd_accounts')
    .select('account_index')
    .where('merchant_id', '=', merchantId)
    .where('mode', '=', mode)
    .executeTakeFirstOrThrow();
  return row.account_index;
}

/** Each merchant's HD account per mode (the index its refunds hot wallet and deposit addresses derive from). */
export function merchantAccounts(
  db: Db,
  q: { merchantId?: string; mode?: Mode } = {},
): Promise<Array<{ merchant_id: string; name: string; mode: Mode; account_index: number }>> {
  let query = db
    .selectFrom('merchant_hd_accounts as a')
    .innerJoin('merchants as m', 'm.id', 'a.merchant_id')
    .select(['a.merchant_id', 'm.name', 'a.mode', 'a.account_index']);
  if (q.merchantId) query = query.where('a.merchant_id', '=', q.merchantId);
  if (q.mode) query = query.where('a.mode', '=', q.mode);
  return query.orderBy('a.merchant_id').orderBy('a.mode').execute();
}
