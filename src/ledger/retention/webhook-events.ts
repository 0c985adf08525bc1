import { sql } from 'kysely';
import { asCount, type PruneClass } from './prune-class.js';

// Webhook events that are done: the delivery settled (delivered, failed or skipped) and nothing touched it since the
// cutoff, with its frozen body, its attempt log and the event's outbox row, all in one statement. The delivery row is
// the driver: an outbox row not yet relayed has none, and a pending delivery (retrying, or resent) is never picked, so
// nothing the relay or the delivery workers still need goes. The outbox row and its delivery go together: the
// per-object ordering check (webhooks/deliveries.ts) holds later events back while an earlier relayed event has no
// delivery row, so an outbox row is never left without its delivery. After this an operator's resend of the event
// answers unknown_event (docs/retention.md).
// Index: webhook_deliveries (created_at, event_id); a delivery resent after the cutoff is skipped by updated_at.

const picked = (cutoff: Date, limit: number | null) => sql`
  select d.event_id from webhook_deliveries d
  where d.created_at < ${cutoff} and d.status <> 'pending' and d.updated_at < ${cutoff}
  order by d.created_at, d.event_id
  ${limit === null ? sql`` : sql`limit ${limit} for update of d skip locked`}`;

export const webhookEvents: PruneClass = {
  name: 'webhook_events',
  tables: ['webhook_deliveries', 'webhook_delivery_attempts', 'outbox_events'],
  async count(db, cutoff) {
    const { rows } = await sql<{ deliveries: string; attempts: string }>`
      select count(*) as deliveries,
             coalesce(sum((select count(*) from webhook_delivery_attempts a where a.event_id = p.event_id)), 0) as attempts
      from (${picked(cutoff, null)}) p`.execute(db);
    const r = rows[0];
    const deliveries = asCount(r?.deliveries);
    // Every delivery row references its outbox row (foreign key): one event each.
    return { webhook_deliveries: deliveries, webhook_delivery_attempts: asCount(r?.attempts), outbox_events: deliveries };
  },
  async pruneBatch(db, cutoff, limit) {
    const { rows } = await sql<{ deliveries: number; attempts: number; events: number }>`
      with picked as (${picked(cutoff, limit)}),
      a as (delete from webhook_delivery_attempts x using picked p where x.event_id = p.event_id returning 1),
      d as (delete from webhook_deliveries x using picked p where x.event_id = p.event_id returning x.event_id),
      o as (delete from outbox_events x using d where x.id = d.event_id returning 1)
      select (select count(*) from d)::int as deliveries, (select count(*) from a)::int as attempts,
             (select count(*) from o)::int as events`.execute(db);
    const r = rows[0];
    return {
      webhook_deliveries: asCount(r?.deliveries),
      webhook_delivery_attempts: asCount(r?.attempts),
      outbox_events: asCount(r?.events),
    };
  },
};
