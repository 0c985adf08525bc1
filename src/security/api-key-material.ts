import { createHash } from 'node:crypto';
import type { Mode } from '../db/schema.js';
import { randomBase62 } from '../domain/ids.js';

// An API key is `sk_<mode>_<32 base62>`; stored only as its SHA-256 (lookup) plus a display prefix.
// Its secret (48 base62) signs requests and is stored encrypted, because HMAC verification needs the plaintext.
export interface KeyMaterial {
  key: string;
  prefix: string;
  hash: string;
  secret: string;
}

export function generateKeyMaterial(mode: Mode): KeyMaterial {
  const key = `sk_${mode}_${randomBase62(32)}`;
  return { key, prefix: keyPrefix(key), hash: hashApiKey(key), secret: randomBase62(48) };
}

/** What operators see and name a key by: mode plus the first 8 random characters. */
export function keyPrefix(key: string): string {
  return key.slice(0, `sk_test_`.length + 8);
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function modeOfKey(key: string): Mode | undefined {
  if (key.startsWith('sk_test_')) return 'test';
  if (key.startsWith('sk_live_')) return 'live';
  return undefined;
}

export function generateWebhookSecret(): string {
  return `whsec_${randomBase62(32)}`;
}
