import { sql, type Kysely } from 'kysely';

// Indexes of the console's lists of webhook deliveries and subscriptions (issue 35): keyset pages on (created_at, id)
// across every merchant (an operator) or within one (a merchant user), and a subscription's charges and its
// customer's payment methods on its detail page.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index webhook_deliveries_created_idx on webhook_deliveries (created_at, event_id)`.execute(db);
  await sql`create index webhook_deliveries_merchant_created_idx on webhook_deliveries (merchant_id, created_at, event_id)`.execute(db);
  await sql`create index subscriptions_created_idx on subscriptions (created_at, id)`.execute(db);
  await sql`create index subscription_charges_subscription_idx on subscription_charges (subscription_id, id)`.execute(db);
  await sql`create index payment_methods_customer_idx on payment_methods (merchant_id, mode, customer)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const i of [
    'payment_methods_customer_idx',
    'subscription_charges_subscription_idx',
    'subscriptions_created_idx',
    'webhook_deliveries_merchant_created_idx',
    'webhook_deliveries_created_idx',
  ])
    await sql`drop index if exists ${sql.ref(i)}`.execute(db);
}
