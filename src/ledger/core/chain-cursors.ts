import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';

// Persisted watcher cursors. Invariant: a cursor row is only written in the transaction that commits the effects
// of the poll that produced it, and only by the holder of the version it read (optimistic fence): the cursor can
// never be ahead of committed processing, and a watcher that lost leadership cannot move it.

export interface StoredCursor {
  cursor: object;
  version: bigint;
  tipHeight: bigint;
}

export class CursorFencedError extends Error {}

export async function loadCursor(db: Kysely<Database>, chainKey: string): Promise<StoredCursor | null> {
  const r = await db
    .selectFrom('chain_cursors')
    .select(['cursor', 'version', 'tip_height'])
    .where('chain_key', '=', chainKey)
    .executeTakeFirst();
  return r ? { cursor: r.cursor, version: r.version, tipHeight: r.tip_height } : null;
}

/** Creates the cursor if none exists (first start); returns the stored one either way. */
export async function initCursor(
  db: Kysely<Database>,
  chainKey: string,
  cursor: object,
  tip: { height: bigint; time: Date },
): Promise<StoredCursor> {
  await db
    .insertInto('chain_cursors')
    .values({ chain_key: chainKey, cursor: JSON.stringify(cursor), tip_height: tip.height, tip_time: tip.time, final_height: tip.height })
    .onConflict((oc) => oc.column('chain_key').doNothing())
    .execute();
  return (await loadCursor(db, chainKey))!;
}

export async function saveCursor(
  trx: Transaction<Database>,
  chainKey: string,
  expectedVersion: bigint,
  next: { cursor: object; tip: { height: bigint; time: Date }; finalHeight: bigint },
): Promise<bigint> {
  const r = await trx
    .updateTable('chain_cursors')
    .set({
      cursor: JSON.stringify(next.cursor),
      tip_height: next.tip.height,
      tip_time: next.tip.time,
      final_height: next.finalHeight,
      version: sql`version + 1`,
      updated_at: sql`now()`,
    })
    .where('chain_key', '=', chainKey)
    .where('version', '=', expectedVersion)
    .returning('version')
    .executeTakeFirst();
  if (!r) throw new CursorFencedError(`cursor ${chainKey} moved by another watcher`);
  return r.version;
}
