import { invalidRequest } from '../domain/errors.js';

// The opaque cursor of the books' and sweeps' keyset lists: the last row's sort key and id, base64url. A cursor that
// does not decode is the caller's mistake (400 on `cursor`).

export interface Keyset {
  /** The sort column's value as text (an ISO time or a number). */
  key: string;
  id: string;
}

export function encodeKeyset(k: Keyset): string {
  return Buffer.from(JSON.stringify([k.key, k.id]), 'utf8').toString('base64url');
}

export function decodeKeyset(cursor: string | undefined): Keyset | null {
  if (cursor === undefined) return null;
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string') return { key: v[0], id: v[1] };
  } catch {
    // below
  }
  throw invalidRequest('parameter_invalid', 'Invalid cursor: not one this list gave.', 'cursor');
}
