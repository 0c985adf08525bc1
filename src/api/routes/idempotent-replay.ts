import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { idempotencyKeyReused } from '../../domain/errors.js';
import { findStoredResponse, requestFingerprint, storeResponse, type IdempotencyScope } from '../../ledger/core/idempotency.js';
import { idempotencyKeyOf } from './query.js';

// Idempotency-Key replays (docs/errors.md "Retrying safely"): the response stored with the object it created or
// changed, in the same transaction, answered again to a retry with the same key; the same key with another request is
// 409 idempotency_key_reused.

/** The stored response of an earlier request with this key, sent again; undefined when none is stored. */
export async function replayStored(
  db: Db,
  scope: IdempotencyScope,
  fingerprint: string,
  reply: FastifyReply,
): Promise<FastifyReply | undefined> {
  const stored = await findStoredResponse(db, scope);
  if (!stored) return undefined;
  if (stored.requestHash !== fingerprint) throw idempotencyKeyReused('Idempotency-Key');
  return reply.code(stored.status).header('Idempotent-Replayed', 'true').type('application/json').send(stored.body);
}

/**
 * An action on an existing object (a cancel) under the request's Idempotency-Key, or undefined without one. The
 * request is the object's id and the body: the same key on another object or with another body is a reuse. `store`
 * runs in the action's transaction, so the change and its answer commit together: a retry after an answer lost to a
 * crash or a dropped connection gets that answer again, where without a key it would find the object already changed
 * and be refused.
 */
export function actionIdempotency(db: Db, req: FastifyRequest, scope: string, objectId: string, body: unknown) {
  const key = idempotencyKeyOf(req);
  if (key === undefined) return undefined;
  const s: IdempotencyScope = { merchantId: req.auth!.merchantId, mode: req.auth!.mode, scope, key };
  const fingerprint = requestFingerprint({ object: objectId, body });
  return {
    replay: (reply: FastifyReply) => replayStored(db, s, fingerprint, reply),
    store: (trx: Transaction<Database>, answer: unknown) =>
      storeResponse(trx, s, { requestHash: fingerprint, status: 200, body: JSON.stringify(answer) }),
  };
}
