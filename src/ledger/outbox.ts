import { sql, type Transaction } from 'kysely';
import type { Database, Mode } from '../db/schema.js';

export interface OutboxEventInput {
  merchantId: string;
  mode: Mode;
  type: string;
  /** The event's data.object, exactly as the spec shapes it for this type. */
  object: Record<string, unknown>;
  /** The business object the event is about (session, refund, ...), for the delivery log and ordering. */
  aggregateId?: string;
  /** Event time; defaults to the transaction's clock. */
  createdAt?: Date;
}

/**
 * Writes an event row in the caller's transaction: it commits with the state change that caused it or not at all.
 * The stored payload is the complete envelope {id, type, created_at, data: {object}}; its jsonb text is the exact
 * body delivered on every attempt. Returns the evt_ id.
 */
export async function insertOutboxEvent(trx: Transaction<Database>, e: OutboxEventInput): Promise<string> {
  const createdAt = Math.floor((e.createdAt ?? new Date()).getTime() / 1000);
  const { rows } = await sql<{ id: string }>`
    with ev as (select next_event_id() as id)
    insert into outbox_events (id, merchant_id, mode, type, aggregate_id, payload)
    select ev.id, ${e.merchantId}, ${e.mode}, ${e.type}, ${e.aggregateId ?? null},
           jsonb_build_object('id', ev.id, 'type', ${e.type}::text, 'created_at', ${createdAt}::bigint,
                              'data', jsonb_build_object('object', ${JSON.stringify(e.object)}::jsonb))
    from ev
    returning id`.execute(trx);
  return rows[0]!.id;
}
