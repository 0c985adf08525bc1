import { sql, type Kysely } from 'kysely';

// The webhook worker's per-object ordering check (loadDeliveryJobs in src/webhooks/deliveries.ts: is an earlier event
// of the same merchant and object still undelivered?) reads `aggregate_id = $x and seq < $y`. With an index on
// aggregate_id alone, a planner without statistics for outbox_events (a table a burst grew by thousands of rows before
// anything analyzed it; autovacuum off) ANDed that index with a range of the primary key, seq < $y: every earlier
// event of the outbox, per job. The webhook benchmark's burst of 5,000 read 24.5 million index entries that way
// (docs/performance.md, "Webhooks: the ordering check's plan"). On (aggregate_id, seq) both conditions are one index
// range, a few entries per object, whatever the estimates. It replaces the aggregate_id index (same leading column:
// the console's and the ledger's lookups by aggregate_id use it as before).
// A plain CREATE INDEX (migrations run in one transaction): writes to outbox_events (every payment's events) wait for
// the build, a second or two on an outbox of a few million rows (retention keeps it to about 90 days of events).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index outbox_events_aggregate_seq_idx on outbox_events (aggregate_id, seq)`.execute(db);
  await sql`drop index outbox_events_aggregate_idx`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index outbox_events_aggregate_idx on outbox_events (aggregate_id)`.execute(db);
  await sql`drop index outbox_events_aggregate_seq_idx`.execute(db);
}
