import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database, Mode } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/errors.js';

// Idempotency records: stored in the same transaction as the object they created, keyed by
// (merchant, mode, scope, key), so the primary key, not a check-then-insert, rejects a concurrent twin.

export interface IdempotencyScope {
  merchantId: string;
  mode: Mode;
  scope: string;
  key: string;
}

export interface StoredResponse {
  requestHash: string;
  status: number;
  body: string;
}

/** Hash of the request's meaning: the parsed JSON with keys sorted, so whitespace and key order do not matter. */
export function requestFingerprint(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

export async function findStoredResponse(db: Db, s: IdempotencyScope): Promise<StoredResponse | undefined> {
  const row = await db
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'response_status', 'response_body'])
    .where('merchant_id', '=', s.merchantId)
    .where('mode', '=', s.mode)
    .where('scope', '=', s.scope)
    .where('key', '=', s.key)
    .executeTakeFirst();
  return row && { requestHash: row.request_hash, status: row.response_status, body: row.response_body };
}

/** True when `err` is the primary key refusing a second stored response for the same key (a concurrent twin won). */
export const isIdempotencyKeyTaken = (err: unknown): boolean => isUniqueViolation(err, 'idempotency_keys_pk');

export async function storeResponse(trx: Transaction<Database>, s: IdempotencyScope, r: StoredResponse): Promise<void> {
  await trx
    .insertInto('idempotency_keys')
    .values({
      merchant_id: s.merchantId,
      mode: s.mode,
      scope: s.scope,
      key: s.key,
      request_hash: r.requestHash,
      response_status: r.status,
      response_body: r.body,
    })
    .execute();
}
