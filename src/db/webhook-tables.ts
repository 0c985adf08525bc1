import type { ColumnType, Generated } from 'kysely';

// Kysely types for the tables of migration 2026_11_21_0200_webhooks; src/db/schema.ts's Database includes them.
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'skipped';
/** State of the delivery right after a logged attempt (or decision not to attempt). */
export type AttemptOutcome = 'delivered' | 'retrying' | 'failed' | 'skipped';

export interface WebhookDeliveriesTable {
  event_id: string;
  merchant_id: string;
  mode: string;
  event_type: string;
  /** The exact body of every attempt, frozen once from the outbox payload. */
  body: string;
  status: ColumnType<DeliveryStatus, DeliveryStatus | undefined, DeliveryStatus>;
  generation: Generated<number>;
  attempts: Generated<number>;
  round_attempts: Generated<number>;
  next_attempt_at: Timestamp;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: NullableTimestamp;
  failed_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookDeliveryAttemptsTable {
  id: Generated<bigint>;
  event_id: string;
  merchant_id: string;
  generation: number;
  /** 1-based across all generations of the event; null when no HTTP request was made. */
  attempt: number | null;
  url: string | null;
  status_code: number | null;
  error: string | null;
  latency_ms: number | null;
  response_excerpt: string | null;
  outcome: AttemptOutcome;
  created_at: Timestamp;
}
