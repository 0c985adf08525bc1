import { sql } from 'kysely';
import type { AttemptOutcome, DeliveryStatus, WebhookDb } from './schema.js';

// Delivery state in Postgres: the only record of an event's outcome. Every write is conditional on the delivery
// still being pending in the generation the caller works on, so a stale or duplicated job cannot overwrite it.

export interface DeliveryTarget {
  event_id: string;
  merchant_id: string;
  mode: string;
  event_type: string;
  body: string;
  status: DeliveryStatus;
  generation: number;
  round_attempts: number;
  webhook_url: string | null;
  webhook_secret_enc: string;
  webhook_secret_prev_enc: string | null;
  prev_secret_valid: boolean;
  /** The object the event is about (cs_..., re_..., sub_...), for log lines; null for events about none. */
  aggregate_id: string | null;
}

/** A delivery target plus whether an earlier event about the same object still holds it back. */
export interface DeliveryJobState extends DeliveryTarget {
  waiting: boolean;
}

/**
 * The delivery targets of many events in one round trip (the worker batches the jobs that start together). Answers
 * one entry per id, in order; undefined for an id without a delivery row.
 *
 * Events about one object (a session, refund, subscription: the outbox's aggregate_id) are delivered in the order
 * they were written: `waiting` is true while an earlier event of the same merchant and object is not yet relayed or
 * still pending. A failed, skipped or delivered earlier event no longer holds later ones back.
 */
export async function loadDeliveryJobs(db: WebhookDb, eventIds: string[]): Promise<Array<DeliveryJobState | undefined>> {
  const { rows } = await sql<DeliveryJobState>`
    select d.event_id, d.merchant_id, d.mode, d.event_type, d.body, d.status, d.generation, d.round_attempts,
           m.webhook_url, m.webhook_secret_enc, m.webhook_secret_prev_enc,
           coalesce(m.webhook_secret_prev_expires_at > now(), false) as prev_secret_valid,
           e.aggregate_id,
           (e.aggregate_id is not null and exists (
             select 1
             from outbox_events earlier
             left join webhook_deliveries ed on ed.event_id = earlier.id
             where earlier.merchant_id = e.merchant_id and earlier.aggregate_id = e.aggregate_id and earlier.seq < e.seq
               and (earlier.relayed_at is null or ed.event_id is null or ed.status = 'pending')
           )) as waiting
    from webhook_deliveries d
    join merchants m on m.id = d.merchant_id
    left join outbox_events e on e.id = d.event_id
    where d.event_id = any(${eventIds}::text[])`.execute(db);
  const byId = new Map(rows.map((r) => [r.event_id, r]));
  return eventIds.map((id) => byId.get(id));
}

/**
 * Creates the delivery row of a relayed event if it is missing: a job can run before the relay's transaction that
 * enqueued it commits (the insert then waits for that transaction and does nothing), or after a relay crash that
 * rolled the row back. The body is rendered exactly as the relay renders it.
 */
export async function ensureDeliveryRow(db: WebhookDb, eventId: string): Promise<void> {
  await sql`
    insert into webhook_deliveries (event_id, merchant_id, mode, event_type, body)
    select id, merchant_id, mode, type, payload::text from outbox_events where id = ${eventId}
    on conflict (event_id) do nothing`.execute(db);
}

export interface AttemptRecord {
  eventId: string;
  merchantId: string;
  generation: number;
  url: string | null;
  statusCode: number | null;
  error: string | null;
  latencyMs: number | null;
  excerpt: string | null;
  /** The delivery's state after this attempt. */
  outcome: AttemptOutcome;
  /** Whether an HTTP request was made (counts towards attempts). */
  attempted: boolean;
  /** For 'retrying': when the next attempt is due. */
  nextAttemptAt?: Date;
}

/**
 * Logs one attempt and moves the delivery to its new state in one statement. Answers the attempt number, or
 * undefined when the delivery was no longer pending in that generation (the log row is written all the same).
 */
export async function recordAttempt(db: WebhookDb, r: AttemptRecord): Promise<{ applied: boolean; attempt: number | null }> {
  const status: DeliveryStatus = r.outcome === 'retrying' ? 'pending' : r.outcome;
  const inc = r.attempted ? 1 : 0;
  const { rows } = await sql<{ applied: boolean; attempt: number | null }>`
    with u as (
      update webhook_deliveries set
        status = ${status},
        attempts = attempts + ${inc},
        round_attempts = round_attempts + ${inc},
        next_attempt_at = coalesce(${r.nextAttemptAt ?? null}::timestamptz, next_attempt_at),
        last_status_code = ${r.statusCode},
        last_error = ${r.error},
        delivered_at = case when ${status} = 'delivered' then now() else delivered_at end,
        failed_at = case when ${status} in ('failed', 'skipped') then now() else failed_at end,
        updated_at = now()
      where event_id = ${r.eventId} and generation = ${r.generation} and status = 'pending'
      returning attempts
    ), ins as (
      insert into webhook_delivery_attempts
        (event_id, merchant_id, generation, attempt, url, status_code, error, latency_ms, response_excerpt, outcome)
      select ${r.eventId}, ${r.merchantId}, ${r.generation},
             case when ${r.attempted} then coalesce((select attempts from u),
                   (select attempts + 1 from webhook_deliveries where event_id = ${r.eventId})) end,
             ${r.url}, ${r.statusCode}, ${r.error}, ${r.latencyMs}, ${r.excerpt}, ${r.outcome}
      returning attempt
    )
    select exists (select 1 from u) as applied, (select attempt from ins) as attempt`.execute(db);
  return rows[0]!;
}

/**
 * recordAttempt for many attempts in one statement (one round trip, one commit): the worker's group commit. Event
 * ids must be distinct within a call (the batcher guarantees it). Answers one result per record, in order.
 */
export async function recordAttempts(db: WebhookDb, rs: AttemptRecord[]): Promise<Array<{ applied: boolean; attempt: number | null }>> {
  if (rs.length === 0) return [];
  const col = <V>(f: (r: AttemptRecord) => V) => rs.map(f);
  const eventIds = col((r) => r.eventId);
  const { rows } = await sql<{ ord: string; applied: boolean; attempt: number | null }>`
    with i as (
      select * from unnest(
        ${eventIds}::text[], ${col((r) => r.merchantId)}::text[], ${col((r) => r.generation)}::int[],
        ${col((r) => r.url)}::text[], ${col((r) => r.statusCode)}::int[], ${col((r) => r.error)}::text[],
        ${col((r) => r.latencyMs)}::int[], ${col((r) => r.excerpt)}::text[], ${col((r) => r.outcome)}::text[],
        ${col((r) => (r.outcome === 'retrying' ? 'pending' : r.outcome))}::text[], ${col((r) => (r.attempted ? 1 : 0))}::int[],
        ${col((r) => r.nextAttemptAt?.toISOString() ?? null)}::timestamptz[], ${col(() => 'pending')}::text[]
      ) with ordinality as t(event_id, merchant_id, generation, url, status_code, error, latency_ms, excerpt, outcome,
                             status, inc, next_at, was, ord)
    ), u as (
      update webhook_deliveries d set
        status = i.status,
        attempts = d.attempts + i.inc,
        round_attempts = d.round_attempts + i.inc,
        next_attempt_at = coalesce(i.next_at, d.next_attempt_at),
        last_status_code = i.status_code,
        last_error = i.error,
        delivered_at = case when i.status = 'delivered' then now() else d.delivered_at end,
        failed_at = case when i.status in ('failed', 'skipped') then now() else d.failed_at end,
        updated_at = now()
      from i
      -- Each row by its primary key: the batch's keys again as an array (the planner sees how few they are), and the
      -- status compared with the batch's column rather than a constant, so that the pending index (whose predicate is
      -- that constant) is never read whole to join the batch (every pending delivery, on an unanalyzed table).
      where d.event_id = any(${eventIds}::text[])
        and d.event_id = i.event_id and d.generation = i.generation and d.status = i.was
      returning d.event_id, d.attempts
    ), ins as (
      insert into webhook_delivery_attempts
        (event_id, merchant_id, generation, attempt, url, status_code, error, latency_ms, response_excerpt, outcome)
      select i.event_id, i.merchant_id, i.generation,
             case when i.inc = 1 then coalesce(u.attempts,
                   (select w.attempts + 1 from webhook_deliveries w where w.event_id = i.event_id)) end,
             i.url, i.status_code, i.error, i.latency_ms, i.excerpt, i.outcome
      from i left join u on u.event_id = i.event_id
      order by i.ord
      returning event_id, attempt
    )
    select i.ord::text as ord, (u.event_id is not null) as applied, ins.attempt
    from i left join u on u.event_id = i.event_id left join ins on ins.event_id = i.event_id
    order by i.ord`.execute(db);
  return rows.map((r) => ({ applied: r.applied, attempt: r.attempt }));
}

/** Back to pending in a new generation (operator resend). Undefined when unknown or already pending. */
export async function reopenDelivery(db: WebhookDb, eventId: string): Promise<{ generation: number; merchant_id: string } | undefined> {
  const { rows } = await sql<{ generation: number; merchant_id: string }>`
    update webhook_deliveries set status = 'pending', generation = generation + 1, round_attempts = 0,
      next_attempt_at = now(), delivered_at = null, failed_at = null, updated_at = now()
    where event_id = ${eventId} and status <> 'pending'
    returning generation, merchant_id`.execute(db);
  return rows[0];
}

export interface FailedDelivery {
  event_id: string;
  merchant_id: string;
  mode: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  failed_at: Date | null;
}

export async function listFailedDeliveries(
  db: WebhookDb,
  filter: { merchantId?: string; since?: Date; includeSkipped?: boolean; limit?: number },
): Promise<FailedDelivery[]> {
  let q = db
    .selectFrom('webhook_deliveries')
    .select(['event_id', 'merchant_id', 'mode', 'event_type', 'status', 'attempts', 'last_status_code', 'last_error', 'failed_at'])
    .where('status', 'in', filter.includeSkipped ? ['failed', 'skipped'] : ['failed'])
    .orderBy('failed_at')
    .orderBy('event_id');
  if (filter.merchantId) q = q.where('merchant_id', '=', filter.merchantId);
  if (filter.since) q = q.where('failed_at', '>=', filter.since);
  if (filter.limit) q = q.limit(filter.limit);
  return q.execute();
}
