import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

// Reading the outbox's tail in commit order (its `seq`): what changed since a position, for live views (the console's
// live stream). The relay keeps its own position; this one is only a reader.

export interface OutboxTailEvent {
  seq: bigint;
  merchant_id: string;
  type: string;
  aggregate_id: string | null;
}

/** The newest position, or 0 on an empty outbox. */
export async function outboxHead(db: Kysely<Database>): Promise<bigint> {
  const r = await db
    .selectFrom('outbox_events')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .executeTakeFirst();
  return r?.seq === null || r?.seq === undefined ? 0n : BigInt(r.seq);
}

/** Events after `seq`, oldest first (the primary key's order), at most `limit`. */
export async function outboxAfter(db: Kysely<Database>, seq: bigint, limit: number): Promise<OutboxTailEvent[]> {
  const rows = await db
    .selectFrom('outbox_events')
    .select(['seq', 'merchant_id', 'type', 'aggregate_id'])
    .where('seq', '>', seq)
    .orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ...r, seq: BigInt(r.seq) }));
}
