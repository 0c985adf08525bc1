import { sql, type Kysely } from 'kysely';

// Retention (issue 38, docs/retention.md): the indexes that make each pruning batch an index scan in time order, so a
// batch of 5,000 rows reads about 5,000 index entries however large the table has grown.
// - idempotency_keys: by creation time (its primary key is (merchant, mode, scope, key), which has no time order).
// - console_sessions: by absolute expiry.
// - reconcile_runs: the runs without a difference by finish time (runs with a difference are never pruned, so they
//   are not in the index and a batch never reads past them).
// webhook_deliveries already has (created_at, event_id) (migration 2026_11_29_0410_console_merchant_lists).
// A plain CREATE INDEX (migrations run in one transaction): writes to the table wait for the build, which takes a
// second or two on a table of a few million rows.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index idempotency_keys_created_idx on idempotency_keys (created_at)`.execute(db);
  await sql`create index console_sessions_expires_idx on console_sessions (expires_at)`.execute(db);
  await sql`create index reconcile_runs_clean_idx on reconcile_runs (finished_at) where differences = 0`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists reconcile_runs_clean_idx`.execute(db);
  await sql`drop index if exists console_sessions_expires_idx`.execute(db);
  await sql`drop index if exists idempotency_keys_created_idx`.execute(db);
}
