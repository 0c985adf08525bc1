import { sql, type Kysely } from 'kysely';

// Indexes for hot lookups that scanned whole tables (issue 13 item 8; test/integration/db-query-plans.test.ts EXPLAINs
// every query the API runs and fails on a sequential scan of a large table).
// - refunds(refund_id): a refund looked up by an id the merchant does not own (`refund_id = X or id = X`, any
//   merchant) decides 403 against 404; the unique key leads with merchant_id and cannot serve it.
// - subscription_charges(payment_id): GET /payment/{id} and refunds by payment_id find the charge behind a payment.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index refunds_refund_id_idx on refunds (refund_id)`.execute(db);
  await sql`create index subscription_charges_payment_idx on subscription_charges (payment_id) where payment_id is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists subscription_charges_payment_idx`.execute(db);
  await sql`drop index if exists refunds_refund_id_idx`.execute(db);
}
