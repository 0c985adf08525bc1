import type { InvariantContext } from '../contract.js';

// Which (event type, business object) pairs reached the webhook receiver, for invariants that ask "did the merchant
// hear of X". Events name their object in different fields (`id`, `session_id`, `invoice_id`, `subscription_id`,
// `payment_id`, … per type: src/domain/events/), so the pairs are read from the outbox's payloads and matched to the
// receiver's deliveries by event id.

export interface Delivered {
  /** The receiver answered 2xx to an event of `type` naming `objectId`. */
  acked(type: string, objectId: string): boolean;
  /** The receiver got an event of `type` naming `objectId`, whatever it answered. */
  sent(type: string, objectId: string): boolean;
}

const OBJECT_FIELDS = ['id', 'session_id', 'payment_id', 'invoice_id', 'subscription_id', 'refund_id'] as const;

export async function deliveredEvents(ctx: Pick<InvariantContext, 'db' | 'deliveries'>): Promise<Delivered> {
  const okIds = new Set(ctx.deliveries.filter((d) => d.answered >= 200 && d.answered < 300).map((d) => d.eventId));
  const anyIds = new Set(ctx.deliveries.map((d) => d.eventId));
  const acked = new Set<string>();
  const sent = new Set<string>();
  for (const e of await ctx.db.selectFrom('outbox_events').select(['id', 'type', 'payload']).execute()) {
    if (!anyIds.has(e.id)) continue;
    const object = ((e.payload as { data?: { object?: Record<string, unknown> } }).data?.object ?? {}) as Record<string, unknown>;
    for (const f of OBJECT_FIELDS) {
      const v = object[f];
      if (typeof v !== 'string') continue;
      sent.add(`${e.type}|${v}`);
      if (okIds.has(e.id)) acked.add(`${e.type}|${v}`);
    }
  }
  return { acked: (t, id) => acked.has(`${t}|${id}`), sent: (t, id) => sent.has(`${t}|${id}`) };
}
