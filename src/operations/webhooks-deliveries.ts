import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { AttemptOutcome, DeliveryStatus } from '../db/webhook-tables.js';
import { keysetPage, pastCursor, type KeysetPage, type KeysetRequest } from './keyset-by-created.js';

// The webhook delivery log (the console's Webhooks page): one row per event with its state, its last attempt's
// latency, response code and body excerpt; and one delivery with every attempt. Reads only; resends are in
// webhooks-resend.ts.

export interface DeliveryFilter {
  merchantId?: string | undefined;
  status?: DeliveryStatus | undefined;
  type?: string | undefined;
  since?: Date | undefined;
}

export interface DeliveryView {
  event_id: string;
  merchant_id: string;
  mode: string;
  event_type: string;
  status: DeliveryStatus;
  generation: number;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: Date;
  created_at: Date;
  delivered_at: Date | null;
  failed_at: Date | null;
  /** Of the last logged attempt (null before any). */
  latency_ms: number | null;
  response_excerpt: string | null;
  last_attempt_at: Date | null;
}

/** The body excerpt the console shows: the first 200 characters of what the receiver answered. */
export const BODY_EXCERPT_CHARS = 200;

const columns = sql`d.event_id, d.merchant_id, d.mode, d.event_type, d.status, d.generation, d.attempts, d.last_status_code,
  d.last_error, d.next_attempt_at, d.created_at, d.delivered_at, d.failed_at,
  a.latency_ms, left(a.response_excerpt, ${BODY_EXCERPT_CHARS}) as response_excerpt, a.created_at as last_attempt_at`;
const lastAttempt = sql`left join lateral (
    select x.latency_ms, x.response_excerpt, x.created_at from webhook_delivery_attempts x
    where x.event_id = d.event_id order by x.id desc limit 1) a on true`;

/** Newest first (or oldest, with order asc), keyset on (created_at, event_id). */
export async function listDeliveries(db: Db, f: DeliveryFilter, page: KeysetRequest): Promise<KeysetPage<DeliveryView>> {
  const where = [sql`true`];
  if (f.merchantId !== undefined) where.push(sql`d.merchant_id = ${f.merchantId}`);
  if (f.status !== undefined) where.push(sql`d.status = ${f.status}`);
  if (f.type !== undefined) where.push(sql`d.event_type = ${f.type}`);
  if (f.since !== undefined) where.push(sql`d.created_at >= ${f.since}`);
  if (page.cursor !== undefined) where.push(pastCursor('webhook_deliveries', 'd', 'event_id', page.cursor, page.order));
  const dir = sql.raw(page.order);
  const { rows } = await sql<DeliveryView>`
    select ${columns} from webhook_deliveries d ${lastAttempt}
    where ${sql.join(where, sql` and `)}
    order by d.created_at ${dir}, d.event_id ${dir}
    limit ${page.limit + 1}`.execute(db);
  return keysetPage(rows, page.limit, (r) => r.event_id);
}

export interface AttemptView {
  id: string;
  generation: number;
  attempt: number | null;
  url: string | null;
  status_code: number | null;
  error: string | null;
  latency_ms: number | null;
  response_excerpt: string | null;
  outcome: AttemptOutcome;
  created_at: Date;
}

export interface DeliveryDetail {
  delivery: DeliveryView;
  body: string;
  attempts: AttemptView[];
}

/** One delivery with its exact body and every attempt, oldest first; undefined for an unknown event. */
export async function deliveryDetail(db: Db, eventId: string): Promise<DeliveryDetail | undefined> {
  const { rows } = await sql<DeliveryView & { body: string }>`
    select ${columns}, d.body from webhook_deliveries d ${lastAttempt} where d.event_id = ${eventId}`.execute(db);
  const row = rows[0];
  if (!row) return undefined;
  const attempts = await db
    .selectFrom('webhook_delivery_attempts')
    .select(['id', 'generation', 'attempt', 'url', 'status_code', 'error', 'latency_ms', 'response_excerpt', 'outcome', 'created_at'])
    .where('event_id', '=', eventId)
    .orderBy('id')
    .execute();
  const { body, ...delivery } = row;
  return { delivery, body, attempts: attempts.map((a) => ({ ...a, id: String(a.id) })) };
}
