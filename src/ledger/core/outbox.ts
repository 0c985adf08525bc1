import { sql, type Transaction } from 'kysely';
import type { Database, Mode } from '../../db/schema.js';

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

/**
 * Writes many event rows in the caller's transaction with ONE statement, in the order given (their `seq`, which the
 * relay follows, and their evt_ ids, each drawn once per row). The same rows as `insertOutboxEvent` called once per
 * event, without a round trip each. Returns how many were written.
 */
export async function insertOutboxEvents(trx: Transaction<Database>, events: readonly OutboxEventInput[]): Promise<number> {
  if (events.length === 0) return 0;
  const now = new Date();
  const col = <T>(f: (e: OutboxEventInput) => T) => events.map(f);
  const { rows } = await sql<{ n: string }>`
    with v as materialized (
      select next_event_id() as id, v.*
      from unnest(${col((e) => e.merchantId)}::text[], ${col((e) => e.mode)}::text[], ${col((e) => e.type)}::text[],
                  ${col((e) => e.aggregateId ?? null)}::text[],
                  ${col((e) => String(Math.floor((e.createdAt ?? now).getTime() / 1000)))}::bigint[],
                  ${col((e) => JSON.stringify(e.object))}::jsonb[])
           with ordinality as v(merchant_id, mode, type, aggregate_id, created_at, object, ord)
      order by v.ord
    ), ins as (
      insert into outbox_events (id, merchant_id, mode, type, aggregate_id, payload)
      select v.id, v.merchant_id, v.mode, v.type, v.aggregate_id,
             jsonb_build_object('id', v.id, 'type', v.type, 'created_at', v.created_at,
                                'data', jsonb_build_object('object', v.object))
      from v order by v.ord
      returning 1
    )
    select count(*)::text as n from ins`.execute(trx);
  return Number(rows[0]!.n);
}
