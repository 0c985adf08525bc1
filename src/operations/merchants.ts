import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import {
  createMerchant,
  listMerchantSettings,
  updateMerchantSettings,
  type IssuedKey,
  type MerchantSettings,
  type MerchantSettingsUpdate,
} from '../ledger/merchants/merchants.js';
import type { SecretBox } from '../security/secret-box.js';
import type { TargetPolicy } from '../webhooks/url-policy.js';
import { keysetPage, pastCursor, type KeysetPage, type KeysetRequest } from './keyset-by-created.js';
import { judgeWebhookUrl, type UrlVerdict } from './webhooks-endpoint.js';

// Merchants: create one (with its test key and webhook secret, answered once), read them with their effective
// settings, update their payment settings. Called by the CLI (`merchant create|list|show|update`) and the console.

/** The deployment's session lifetime when SESSION_LIFETIME_SECONDS is not set (src/config.ts's default). */
export const DEFAULT_SESSION_LIFETIME_SECONDS = 1800;

/** SESSION_LIFETIME_SECONDS of an environment (the console's), else the configuration's default. */
export function sessionLifetimeDefault(env: Record<string, string | undefined>): number {
  const v = Number(env.SESSION_LIFETIME_SECONDS);
  return Number.isSafeInteger(v) && v > 0 ? v : DEFAULT_SESSION_LIFETIME_SECONDS;
}

export interface EffectiveMerchant {
  merchant_id: string;
  name: string;
  webhook_url: string | null;
  created_at: Date;
  session_lifetime_seconds: number;
  session_lifetime_source: 'default' | 'merchant';
  underpayment_tolerance_bps: number;
}

/** A merchant's settings as they apply: its own session lifetime or the deployment's. */
export function effectiveSettings(m: MerchantSettings, defaultSessionLifetimeSeconds: number): EffectiveMerchant {
  return {
    merchant_id: m.merchant_id,
    name: m.name,
    webhook_url: m.webhook_url,
    created_at: m.created_at,
    session_lifetime_seconds: m.session_lifetime_seconds ?? defaultSessionLifetimeSeconds,
    session_lifetime_source: m.session_lifetime_seconds === null ? 'default' : 'merchant',
    underpayment_tolerance_bps: m.underpayment_tolerance_bps,
  };
}

export async function findMerchant(db: Db, merchantId: string): Promise<MerchantSettings | undefined> {
  return (await listMerchantSettings(db, merchantId))[0];
}

/** Oldest first by default, keyset on (created_at, id). */
export async function listMerchantPage(db: Db, page: KeysetRequest): Promise<KeysetPage<MerchantSettings>> {
  let q = db
    .selectFrom('merchants as m')
    .select(['m.id', 'm.name', 'm.webhook_url', 'm.created_at', 'm.session_lifetime_seconds', 'm.underpayment_tolerance_bps']);
  if (page.cursor !== undefined) q = q.where(pastCursor('merchants', 'm', 'id', page.cursor, page.order));
  const rows = await q
    .orderBy(sql`m.created_at`, page.order)
    .orderBy('m.id', page.order)
    .limit(page.limit + 1)
    .execute();
  const out = keysetPage(rows, page.limit, (r) => r.id);
  return {
    nextCursor: out.nextCursor,
    rows: out.rows.map((r) => ({
      merchant_id: r.id,
      name: r.name,
      webhook_url: r.webhook_url,
      created_at: r.created_at,
      session_lifetime_seconds: r.session_lifetime_seconds,
      underpayment_tolerance_bps: r.underpayment_tolerance_bps,
    })),
  };
}

export type CreateMerchantResult =
  | { kind: 'created'; merchant: MerchantSettings; webhookSecret: string; testKey: IssuedKey; verdict: UrlVerdict | null }
  | { kind: 'refused'; verdict: UrlVerdict & { ok: false } };

/** Creates a merchant (test key, webhook secret), its webhook URL checked against the endpoint rules first. */
export async function createMerchantAccount(
  db: Db,
  box: SecretBox,
  input: { name: string; webhookUrl: string | null; testOnly: boolean },
  policy: TargetPolicy,
): Promise<CreateMerchantResult> {
  let verdict: UrlVerdict | null = null;
  if (input.webhookUrl !== null) {
    verdict = await judgeWebhookUrl(input.webhookUrl, input.testOnly, policy);
    if (!verdict.ok) return { kind: 'refused', verdict };
  }
  const m = await createMerchant(db, box, { name: input.name, webhookUrl: input.webhookUrl });
  const merchant = (await findMerchant(db, m.merchantId))!;
  return { kind: 'created', merchant, webhookSecret: m.webhookSecret, testKey: m.testKey, verdict };
}

/** The one writer of a merchant's payment settings (ranges checked by the ledger); undefined for an unknown merchant. */
export function updateMerchant(db: Db, merchantId: string, update: MerchantSettingsUpdate): Promise<MerchantSettings | undefined> {
  return updateMerchantSettings(db, merchantId, update);
}
