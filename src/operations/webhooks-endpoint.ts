import type { Db } from '../db/database.js';
import { rotateWebhookSecret, setWebhookUrl, type RotatedSecret } from '../ledger/merchants/webhook-secrets.js';
import type { SecretBox } from '../security/secret-box.js';
import { webhookSettingsFrom } from '../webhooks/config.js';
import { webhookSecretAad } from '../security/sealed-column-aad.js';
import { checkWebhookTarget, checkWebhookTargetWithoutDns, type TargetPolicy } from '../webhooks/url-policy.js';

// A merchant's webhook endpoint: its URL (checked against the endpoint rules, docs/webhooks.md) and its signing
// secret's rotation. Called by the CLI (`webhooks set-url`, `webhooks rotate-secret`, `merchant create`) and the
// console alike; each face words the refusals its own way.

/** Bounds of a rotation's overlap, in hours. */
export const OVERLAP_HOURS_RANGE = { min: 0, max: 24 * 30 } as const;

export type UrlVerdict =
  /** Accepted; `live` says whether live-mode events may use it too. */
  | { ok: true; live: { ok: true } | { ok: false; reason: string } }
  /** Refused by the rules of `mode` (live: the URL was not marked test-only). */
  | { ok: false; mode: 'live' | 'test'; reason: string };

/**
 * The endpoint rules at configuration time: a URL must pass the live-mode rules, or, when the operator says it is
 * for test-mode events only, the test-mode rules, checked without DNS (a test host need not resolve yet; every
 * attempt is checked again with DNS). With `testOnly` a host name is not looked up, so its live verdict is
 * "not checked".
 */
export async function judgeWebhookUrl(url: string, testOnly: boolean, policy: TargetPolicy): Promise<UrlVerdict> {
  if (!testOnly) {
    const live = await checkWebhookTarget(url, 'live', policy);
    return live.ok ? { ok: true, live } : { ok: false, mode: 'live', reason: live.reason };
  }
  const test = checkWebhookTargetWithoutDns(url, 'test', policy);
  if (!test.ok) return { ok: false, mode: 'test', reason: test.reason };
  const live = checkWebhookTargetWithoutDns(url, 'live', policy);
  if (live.ok && !live.resolved) return { ok: true, live: { ok: false, reason: 'not checked: --test-only does not resolve the host' } };
  return { ok: true, live: live.ok ? { ok: true } : { ok: false, reason: live.reason } };
}

export type SetUrlResult =
  | { kind: 'set'; url: string | null; verdict: UrlVerdict | null }
  | { kind: 'refused'; verdict: UrlVerdict & { ok: false } }
  | { kind: 'no_merchant' };

/** Sets the URL once the rules accept it; null clears it (no delivery is attempted until a URL is set again). */
export async function setWebhookEndpoint(
  db: Db,
  merchantId: string,
  input: { url: string | null; testOnly: boolean },
  policy: TargetPolicy,
): Promise<SetUrlResult> {
  if (input.url === null)
    return (await setWebhookUrl(db, merchantId, null)) ? { kind: 'set', url: null, verdict: null } : { kind: 'no_merchant' };
  const verdict = await judgeWebhookUrl(input.url, input.testOnly, policy);
  if (!verdict.ok) return { kind: 'refused', verdict };
  if (!(await setWebhookUrl(db, merchantId, input.url))) return { kind: 'no_merchant' };
  return { kind: 'set', url: input.url, verdict };
}

/** Rotates the signing secret (the previous one keeps signing for `overlapHours`); undefined for an unknown merchant. */
export function rotateEndpointSecret(db: Db, box: SecretBox, merchantId: string, overlapHours: number): Promise<RotatedSecret | undefined> {
  if (!Number.isFinite(overlapHours) || overlapHours < OVERLAP_HOURS_RANGE.min || overlapHours > OVERLAP_HOURS_RANGE.max)
    throw new RangeError(`overlap must be ${OVERLAP_HOURS_RANGE.min}..${OVERLAP_HOURS_RANGE.max} hours`);
  return rotateWebhookSecret(db, box, merchantId, overlapHours);
}

export interface WebhookEndpointView {
  merchantId: string;
  url: string | null;
  /** `whsec_` and the secret's first 4 characters: enough to tell secrets apart, never enough to sign. */
  secretPrefix: string;
  previousSecretExpiresAt: Date | null;
}

const SECRET_PREFIX_LENGTH = 'whsec_'.length + 4;

export async function webhookEndpoint(db: Db, box: SecretBox, merchantId: string): Promise<WebhookEndpointView | undefined> {
  const m = await db
    .selectFrom('merchants')
    .select(['id', 'webhook_url', 'webhook_secret_enc', 'webhook_secret_prev_expires_at'])
    .where('id', '=', merchantId)
    .executeTakeFirst();
  if (!m) return undefined;
  const secret = box.open(m.webhook_secret_enc, webhookSecretAad(m.id));
  const prevUntil = m.webhook_secret_prev_expires_at;
  return {
    merchantId: m.id,
    url: m.webhook_url,
    secretPrefix: secret.slice(0, SECRET_PREFIX_LENGTH),
    previousSecretExpiresAt: prevUntil !== null && prevUntil.getTime() > Date.now() ? prevUntil : null,
  };
}

/** The deployment's endpoint rules and default overlap (WEBHOOK_* settings of `env`). */
export function endpointSettings(env: Record<string, string | undefined>): { policy: TargetPolicy; secretOverlapHours: number } {
  const s = webhookSettingsFrom(env);
  return { policy: { allowPrivateTargetsInTest: s.allowPrivateTargetsInTest }, secretOverlapHours: s.secretOverlapHours };
}
