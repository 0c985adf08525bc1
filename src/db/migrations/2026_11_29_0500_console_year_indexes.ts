import { sql, type Kysely } from 'kysely';

// Indexes for the console at a year of data (issue 35, Performance; npm run bench:console, docs/performance.md),
// found by EXPLAIN over a million sessions and by test/integration/console-query-plans.test.ts:
// - payment_sessions (paid_at) where paid, covering what the overview sums (network, mode, token, the quotes, the
//   target amount): the overview's volume per day and its time to paid as an index-only range of 30 days, for every
//   merchant or (with merchant_id first) for one.
// - payment_sessions (created_at) including status: the overview's end-state rates as an index-only range.
// - payment_sessions (status, created_at, id): the payments list filtered by a status, either direction (open sessions
//   are all recent: walking created_at from the oldest would read the year to find them).
// - deposits (session_id, observed_at): a session's first deposit (time to paid) from the index alone.
// - deposits (confirmed_at, id) where confirmed: the payments export of every merchant over a time range.
// - refunds (status, created_at, id): the refunds list filtered by a status (failed, pending) newest first.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index payment_sessions_paid_idx on payment_sessions (paid_at)
            include (merchant_id, network, mode, token, quote_usdt_minor, quote_usdc_minor, target_amount_minor)
            where status = 'paid'`.execute(db);
  await sql`create index payment_sessions_merchant_paid_idx on payment_sessions (merchant_id, paid_at)
            include (network, mode, token, quote_usdt_minor, quote_usdc_minor, target_amount_minor)
            where status = 'paid'`.execute(db);
  await sql`create index payment_sessions_created_status_idx on payment_sessions (created_at) include (status)`.execute(db);
  await sql`create index payment_sessions_status_created_idx on payment_sessions (status, created_at, id)`.execute(db);
  await sql`create index deposits_session_observed_idx on deposits (session_id, observed_at)`.execute(db);
  await sql`create index deposits_confirmed_at_idx on deposits (confirmed_at, id) where status = 'confirmed'`.execute(db);
  await sql`create index refunds_status_created_idx on refunds (status, created_at, id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const name of [
    'refunds_status_created_idx',
    'deposits_confirmed_at_idx',
    'deposits_session_observed_idx',
    'payment_sessions_status_created_idx',
    'payment_sessions_created_status_idx',
    'payment_sessions_merchant_paid_idx',
    'payment_sessions_paid_idx',
  ]) {
    await sql`drop index if exists ${sql.id(name)}`.execute(db);
  }
}
