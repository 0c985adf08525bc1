import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError } from './errors.js';
import type { WebhookEvent } from './types.js';

// Verifies a webhook delivery: X-Service-Signature (newest secret) or, during a secret rotation overlap,
// X-Service-Signature-Previous (previous secret) must equal hex HMAC-SHA256(secret, `<timestamp>.<nonce>.<raw body>`)
// for one of `secrets`, compared in constant time; X-Service-Timestamp must be within `toleranceSeconds` of now.
// Pass every secret you accept (during your own switch-over: the old and the new one). Give the RAW body bytes, as
// received, not re-serialized JSON.

export type HeaderBag = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Largest accepted distance between X-Service-Timestamp and now; default 300 s. */
  toleranceSeconds?: number;
  /** Unix seconds; default now. */
  nowSeconds?: number;
}

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : bag[key];
  return Array.isArray(v) ? v[0] : v;
}

const HEX64 = /^[0-9a-f]{64}$/i;

export function verifyWebhook(rawBody: string | Uint8Array, headers: HeaderBag, secrets: string | readonly string[], opts: VerifyOptions = {}): WebhookEvent {
  const timestamp = header(headers, 'x-service-timestamp');
  const nonce = header(headers, 'x-service-nonce');
  const given = [header(headers, 'x-service-signature'), header(headers, 'x-service-signature-previous')].filter(
    (s): s is string => s !== undefined && HEX64.test(s),
  );
  if (!timestamp || !nonce || given.length === 0) {
    throw new WebhookVerificationError('missing_header', 'X-Service-Timestamp, X-Service-Nonce and a hex X-Service-Signature are required.');
  }
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('timestamp', 'X-Service-Timestamp is not Unix seconds.');
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(timestamp)) > (opts.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError('timestamp', 'X-Service-Timestamp is outside the tolerance window (replay or clock skew).');
  }
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  const candidates = given.map((g) => Buffer.from(g, 'hex'));
  let ok = false;
  // Every secret against every given signature, without an early exit: the time taken does not depend on which matched.
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    const expected = createHmac('sha256', secret).update(`${timestamp}.${nonce}.`, 'utf8').update(body).digest();
    for (const c of candidates) ok = timingSafeEqual(expected, c) || ok;
  }
  if (!ok) throw new WebhookVerificationError('signature', 'No signature matches the body with the given secrets.');
  try {
    return JSON.parse(body.toString('utf8')) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('body', 'The body is not JSON.');
  }
}
