import type { Invariant, ReceivedDelivery, Violation } from '../contract.js';

export const WEBHOOKS = 'every-event-delivered-once-in-order';

// Every outbox event of a merchant with a webhook URL reached the receiver at least once with a 2xx, with one body per
// event id (every attempt byte-identical, and equal to the frozen webhook_deliveries.body), and per object in order:
// for the events of one object (the outbox row's aggregate_id: docs/webhooks.md "Ordering"), the first 2xx of each
// arrives after the first 2xx of every event written before it. An earlier event the operator resent (generation > 0)
// is exempt from the order, as the docs say it then arrives after the later ones. Events of merchants without a URL
// are `skipped` by design and not checked here.
export const everyEventDeliveredOnceInOrder: Invariant = async (ctx) => {
  const out: Violation[] = [];
  const v = (subject: string, message: string) => out.push({ invariant: WEBHOOKS, subject, message });
  const events = await ctx.db
    .selectFrom('outbox_events as e')
    .innerJoin('merchants as m', 'm.id', 'e.merchant_id')
    .leftJoin('webhook_deliveries as d', 'd.event_id', 'e.id')
    .select(['e.id', 'e.seq', 'e.type', 'e.aggregate_id', 'e.merchant_id', 'm.webhook_url', 'd.body', 'd.status', 'd.generation'])
    .orderBy('e.seq')
    .execute();
  const received = new Map<string, ReceivedDelivery[]>();
  for (const d of ctx.deliveries) received.set(d.eventId, [...(received.get(d.eventId) ?? []), d]);

  const firstOk = new Map<string, number>();
  for (const e of events) {
    const got = (received.get(e.id) ?? []).sort((a, b) => a.seq - b.seq);
    const bodies = new Set(got.map((d) => d.body));
    if (bodies.size > 1) v(e.id, `event ${e.id} (${e.type}) reached the receiver with ${bodies.size} different bodies`);
    if (e.body !== null && got.length > 0 && !bodies.has(e.body))
      v(e.id, `event ${e.id} (${e.type}) reached the receiver with a body other than its frozen webhook_deliveries.body`);
    if (e.webhook_url === null) continue;
    const ok = got.find((d) => d.answered >= 200 && d.answered < 300);
    if (!ok) {
      v(
        e.id,
        `event ${e.id} (${e.type}, object ${e.aggregate_id ?? 'none'}) never reached the receiver with a 2xx (${got.length} requests; delivery ${e.status ?? 'not relayed'})`,
      );
      continue;
    }
    firstOk.set(e.id, ok.seq);
  }

  const byObject = new Map<string, typeof events>();
  for (const e of events) {
    if (e.aggregate_id === null) continue;
    const key = `${e.merchant_id}/${e.aggregate_id}`;
    byObject.set(key, [...(byObject.get(key) ?? []), e]);
  }
  for (const [key, list] of byObject) {
    let latest: { id: string; seq: number } | null = null;
    for (const e of list) {
      const seq = firstOk.get(e.id);
      if (seq === undefined) continue;
      if (latest && seq < latest.seq)
        v(key.split('/')[1]!, `object ${key}: event ${e.id} (${e.type}) was first accepted before the earlier event ${latest.id}`);
      if ((e.generation ?? 0) === 0 && (!latest || seq > latest.seq)) latest = { id: e.id, seq };
    }
  }

  const ids = new Set(events.map((e) => e.id));
  const unknown = [...received.keys()].filter((id) => !ids.has(id));
  for (const id of unknown) v(id, `the receiver got event ${id}, which is not in the outbox`);
  return out;
};
