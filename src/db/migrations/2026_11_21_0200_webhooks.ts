import { sql, type Kysely } from 'kysely';

// Webhooks: delivery state per event, a log row per attempt, the previous signing secret during a rotation,
// and a NOTIFY that wakes the outbox relay when events commit. Types: src/db/webhook-tables.ts.
export async function up(db: Kysely<any>): Promise<void> {
  // During a rotation the previous secret keeps signing (beside the new one) until it expires.
  await db.schema
    .alterTable('merchants')
    .addColumn('webhook_secret_prev_enc', 'text')
    .addColumn('webhook_secret_prev_expires_at', 'timestamptz')
    .execute();

  // One row per relayed event. `body` is frozen once, from the outbox payload, and is the exact byte sequence of
  // every attempt and every resend. `generation` grows with each operator resend; jobs of older generations are void.
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('event_id', 'text', (c) => c.primaryKey().references('outbox_events.id'))
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending').check(sql`status in ('pending','delivered','failed','skipped')`))
    .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('round_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', 'timestamptz')
    .addColumn('failed_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index webhook_deliveries_pending_idx on webhook_deliveries (next_attempt_at) where status = 'pending'`.execute(db);
  await sql`create index webhook_deliveries_failed_idx on webhook_deliveries (failed_at) where status in ('failed','skipped')`.execute(db);
  await db.schema.createIndex('webhook_deliveries_merchant_idx').on('webhook_deliveries').columns(['merchant_id', 'status']).execute();

  // Every attempt, and every decision not to attempt (skipped, refused URL). attempt is null when no request was made.
  await db.schema
    .createTable('webhook_delivery_attempts')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('event_id', 'text', (c) => c.notNull().references('webhook_deliveries.event_id'))
    .addColumn('merchant_id', 'text', (c) => c.notNull())
    .addColumn('generation', 'integer', (c) => c.notNull())
    .addColumn('attempt', 'integer')
    .addColumn('url', 'text')
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('latency_ms', 'integer')
    .addColumn('response_excerpt', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull().check(sql`outcome in ('delivered','retrying','failed','skipped')`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('webhook_delivery_attempts_event_idx').on('webhook_delivery_attempts').columns(['event_id', 'id']).execute();

  // Statement-level, so a transaction writing many events sends one notification (NOTIFY also folds duplicates).
  await sql`
    create function outbox_events_notify() returns trigger language plpgsql as $$
    begin
      perform pg_notify('outbox_events', '');
      return null;
    end $$`.execute(db);
  await sql`create trigger outbox_events_notify after insert on outbox_events for each statement execute function outbox_events_notify()`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists outbox_events_notify on outbox_events`.execute(db);
  await sql`drop function if exists outbox_events_notify()`.execute(db);
  await db.schema.dropTable('webhook_delivery_attempts').ifExists().execute();
  await db.schema.dropTable('webhook_deliveries').ifExists().execute();
  await db.schema.alterTable('merchants').dropColumn('webhook_secret_prev_expires_at').dropColumn('webhook_secret_prev_enc').execute();
}
