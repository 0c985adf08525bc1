import type { Redis } from 'ioredis';
import type { Db } from '../db/database.js';
import { ensureDeliveryRow, listFailedDeliveries, reopenDelivery } from '../webhooks/deliveries.js';
import { createDeliveryQueue, deliveryJob, type DeliveryQueue } from '../webhooks/queue.js';

// Operator resends of webhook events: one event (same id, same body) or every failed delivery since a time. A resend
// reopens the delivery in a new generation (src/webhooks/deliveries.ts) and enqueues its job; the workers deliver.
// Called by the CLI (`webhooks resend`, `webhooks resend-failed`) and the console alike.

export type ResendOutcome =
  | { event_id: string; result: 'resent'; generation: number; job_id: string }
  | { event_id: string; result: 'already_pending' | 'not_yet_relayed' | 'unknown_event' };

/** A delivery queue producer for the length of `fn` (BullMQ's prefix is the deployment's REDIS_KEY_PREFIX). */
export async function withDeliveryQueue<T>(redis: Redis, prefix: string, fn: (q: DeliveryQueue) => Promise<T>): Promise<T> {
  const q = createDeliveryQueue(redis, prefix);
  try {
    return await fn(q);
  } finally {
    await q.close();
  }
}

async function enqueue(q: DeliveryQueue, eventId: string, generation: number): Promise<string> {
  const j = deliveryJob({ eventId, generation });
  await q.queue.add(j.name, j.data, j.opts);
  return j.opts.jobId!;
}

/** Reopens one event's delivery in a new generation and enqueues it. */
export async function resendEvent(db: Db, q: DeliveryQueue, eventId: string): Promise<ResendOutcome> {
  const reopened = await reopenDelivery(db, eventId);
  if (!reopened) {
    const d = await db.selectFrom('webhook_deliveries').select(['status']).where('event_id', '=', eventId).executeTakeFirst();
    if (d) return { event_id: eventId, result: 'already_pending' };
    const o = await db.selectFrom('outbox_events').select(['relayed_at']).where('id', '=', eventId).executeTakeFirst();
    if (!o) return { event_id: eventId, result: 'unknown_event' };
    if (o.relayed_at === null) return { event_id: eventId, result: 'not_yet_relayed' };
    // Relayed but its delivery row lost to a crash: recreate it (pending, generation 0) and enqueue.
    await ensureDeliveryRow(db, eventId);
    return { event_id: eventId, result: 'resent', generation: 0, job_id: await enqueue(q, eventId, 0) };
  }
  return { event_id: eventId, result: 'resent', generation: reopened.generation, job_id: await enqueue(q, eventId, reopened.generation) };
}

/** The merchant an event belongs to (its delivery row, else its outbox row); undefined for an unknown event. */
export async function eventMerchant(db: Db, eventId: string): Promise<string | undefined> {
  const d = await db.selectFrom('webhook_deliveries').select('merchant_id').where('event_id', '=', eventId).executeTakeFirst();
  if (d) return d.merchant_id;
  const o = await db.selectFrom('outbox_events').select('merchant_id').where('id', '=', eventId).executeTakeFirst();
  return o?.merchant_id ?? undefined;
}

/** Resends every delivery that failed (and, with includeSkipped, was skipped) since `since`, oldest first. */
export async function resendFailedSince(
  db: Db,
  q: DeliveryQueue,
  f: { since: Date; merchantId?: string | undefined; includeSkipped: boolean },
): Promise<{ resent: number; events: ResendOutcome[] }> {
  const rows = await listFailedDeliveries(db, {
    since: f.since,
    ...(f.merchantId ? { merchantId: f.merchantId } : {}),
    includeSkipped: f.includeSkipped,
  });
  const events: ResendOutcome[] = [];
  for (const row of rows) events.push(await resendEvent(db, q, row.event_id));
  return { resent: events.filter((r) => r.result === 'resent').length, events };
}
