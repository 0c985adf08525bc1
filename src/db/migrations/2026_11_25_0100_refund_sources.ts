import { sql, type Kysely } from 'kysely';

// Money back to customers (issue 16 item 4): a refund may pay back one unmatched deposit (late, to a closed session,
// surplus) instead of a paid session. `deposit_id` names it; `session_id` stays the deposit's session (the merchant's
// object, and the row whose lock serialises refunds of it). Refunds of the session itself have deposit_id null.
// The watch set asks per address whether confirmed deposits are still there (src/ledger/payments/address-holdings.ts), and
// exports read charges by merchant and period (issue 16 item 6).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('refunds')
    .addColumn('deposit_id', 'text', (c) => c.references('deposits.id'))
    .execute();
  await sql`create index refunds_deposit_idx on refunds (deposit_id) where deposit_id is not null`.execute(db);
  await sql`create index deposits_confirmed_to_idx on deposits (network, mode, to_address) where status = 'confirmed'`.execute(db);
  // A merchant's export of subscription charges by period (GET /exports/charges; the other kinds have such an index).
  await sql`create index subscription_charges_export_idx on subscription_charges (merchant_id, mode, created_at, id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists subscription_charges_export_idx`.execute(db);
  await sql`drop index if exists deposits_confirmed_to_idx`.execute(db);
  await sql`drop index if exists refunds_deposit_idx`.execute(db);
  await db.schema.alterTable('refunds').dropColumn('deposit_id').execute();
}
