import { randomBytes } from 'node:crypto';

// Ids: a type prefix and 24 random base62 characters (decisions.md). Opaque to clients.
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export type IdPrefix = 'cs' | 'pay' | 're' | 'sub' | 'in' | 'pm' | 'req' | 'mch' | 'key' | 'dep' | 'po' | 'swp' | 'sws' | 'cu';

/** Random base62 string; rejection sampling keeps every character uniformly likely. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248) out += ALPHABET[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(24)}`;
}

export function hasIdShape(value: string, prefix: IdPrefix): boolean {
  return new RegExp(`^${prefix}_[0-9A-Za-z]{24}$`).test(value);
}
