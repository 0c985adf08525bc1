import { sql, type Kysely } from 'kysely';

// Subscriptions (issue 9): subscriptions, their invoices, payment methods (observed wallet authorizations), the
// on-chain charges behind invoices, and the Approval scan cursors. Table types: src/db/schema.ts (SubscriptionTables).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('payment_methods')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test','live')`))
    .addColumn('customer', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull().defaultTo('crypto_wallet'))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active').check(sql`status in ('active','revoked')`))
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('owner_address', 'text', (c) => c.notNull())
    .addColumn('spender_address', 'text', (c) => c.notNull())
    .addColumn('allowance_base', sql`numeric(78,0)`, (c) => c.notNull())
    .addColumn('approval_tx_hash', 'text', (c) => c.notNull())
    .addColumn('approval_log_index', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // One observed Approval log authorizes at most one payment method: a re-scan never creates a twin.
    .addUniqueConstraint('payment_methods_approval_uq', ['network', 'mode', 'approval_tx_hash', 'approval_log_index'])
    .execute();

  await db.schema
    .createTable('subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test','live')`))
    .addColumn('customer', 'text', (c) => c.notNull())
    .addColumn('customer_email', 'text')
    .addColumn('customer_phone', 'text')
    .addColumn('customer_name', 'text')
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('price_id', 'text', (c) => c.notNull())
    .addColumn('product', 'text', (c) => c.notNull())
    .addColumn('unit_amount_minor', 'bigint', (c) => c.notNull().check(sql`unit_amount_minor > 0`))
    .addColumn('interval', 'text', (c) => c.notNull().check(sql`interval in ('day','week','month','year')`))
    .addColumn('quantity', 'integer', (c) => c.notNull().check(sql`quantity > 0`))
    .addColumn('item_metadata', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('success_url', 'text')
    .addColumn('cancel_url', 'text')
    .addColumn('trial_end', 'timestamptz')
    .addColumn('billing_cycle_anchor', 'timestamptz')
    .addColumn('cancel_at', 'timestamptz')
    .addColumn('cancel_at_period_end', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('iterations', 'integer')
    .addColumn('paid_periods', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('period_number', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .defaultTo('incomplete')
        .check(sql`status in ('incomplete','incomplete_expired','trialing','active','past_due','canceled')`),
    )
    .addColumn('payment_method_id', 'text', (c) => c.references('payment_methods.id'))
    .addColumn('current_period_start', 'timestamptz')
    .addColumn('current_period_end', 'timestamptz')
    .addColumn('latest_invoice_id', 'text')
    .addColumn('canceled_at', 'timestamptz')
    .addColumn('cancellation_reason', 'text')
    .addColumn('cancellation_comment', 'text')
    .addColumn('metadata', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    // The customer's choice on the authorization page: the wallet expected to approve, on which network and token.
    .addColumn('auth_network', 'text')
    .addColumn('auth_token', 'text')
    .addColumn('auth_owner', 'text')
    .addColumn('auth_allowance_base', sql`numeric(78,0)`)
    // The scheduler's work list: what is due next and when. NULL while nothing is due (or a charge is in flight).
    .addColumn('next_action', 'text', (c) => c.check(sql`next_action in ('expire','renew','retry','cancel')`))
    .addColumn('next_action_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('subscriptions_cancel_at_xor_iterations', sql`cancel_at is null or iterations is null`)
    .execute();
  await db.schema.createIndex('subscriptions_list_idx').on('subscriptions').columns(['merchant_id', 'mode', 'created_at', 'id']).execute();
  await sql`create index subscriptions_due_idx on subscriptions (next_action_at) where next_action_at is not null`.execute(db);
  await sql`create index subscriptions_pending_auth_idx on subscriptions (auth_network, mode, auth_owner) where status = 'incomplete'`.execute(
    db,
  );

  await db.schema
    .createTable('invoices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('subscription_id', 'text', (c) => c.notNull().references('subscriptions.id'))
    .addColumn('customer', 'text', (c) => c.notNull())
    .addColumn('period_number', 'integer', (c) => c.notNull())
    .addColumn('amount_due_minor', 'bigint', (c) => c.notNull())
    .addColumn('amount_paid_minor', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('open').check(sql`status in ('draft','open','paid','void','uncollectible')`))
    .addColumn('payment_status', 'text', (c) => c.notNull().defaultTo('unpaid').check(sql`payment_status in ('unpaid','paid','failed')`))
    .addColumn('billing_reason', 'text', (c) => c.notNull())
    .addColumn('period_start', 'timestamptz', (c) => c.notNull())
    .addColumn('period_end', 'timestamptz', (c) => c.notNull())
    .addColumn('due_date', 'timestamptz', (c) => c.notNull())
    .addColumn('payment_id', 'text')
    .addColumn('paid_at', 'timestamptz')
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('first_failed_at', 'timestamptz')
    .addColumn('metadata', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // A period is invoiced once, whatever runs the scheduler and however often.
    .addUniqueConstraint('invoices_subscription_period_uq', ['subscription_id', 'period_number'])
    .execute();
  await db.schema.createIndex('invoices_list_idx').on('invoices').columns(['merchant_id', 'mode', 'created_at', 'id']).execute();
  await db.schema.createIndex('invoices_subscription_idx').on('invoices').column('subscription_id').execute();

  // One on-chain transferFrom attempt to pay an invoice. The signed bytes are stored (state 'signed') BEFORE the
  // broadcast, under the charger's nonce lock; a crash re-broadcasts the same bytes.
  await db.schema
    .createTable('subscription_charges')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('invoice_id', 'text', (c) => c.notNull().references('invoices.id'))
    .addColumn('subscription_id', 'text', (c) => c.notNull().references('subscriptions.id'))
    .addColumn('merchant_id', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('owner_address', 'text', (c) => c.notNull())
    .addColumn('charger_address', 'text', (c) => c.notNull())
    .addColumn('destination_address', 'text', (c) => c.notNull())
    .addColumn('amount_base', sql`numeric(78,0)`, (c) => c.notNull().check(sql`amount_base > 0`))
    .addColumn('state', 'text', (c) =>
      c.notNull().defaultTo('pending').check(sql`state in ('pending','signed','broadcast','succeeded','failed')`),
    )
    .addColumn('failure_reason', 'text')
    .addColumn('nonce', sql`numeric(78,0)`)
    .addColumn('tx_hash', 'text')
    .addColumn('signed', 'jsonb')
    .addColumn('payment_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('signed_at', 'timestamptz')
    .addColumn('settled_at', 'timestamptz')
    .execute();
  // At most one charge of an invoice is in flight or succeeded: with the invoice's (subscription, period) key this
  // makes each period charged at most once.
  await sql`create unique index subscription_charges_one_live on subscription_charges (invoice_id) where state <> 'failed'`.execute(db);
  await sql`create index subscription_charges_open_idx on subscription_charges (id) where state in ('pending','signed','broadcast')`.execute(
    db,
  );

  // Approval log scan per chain: the last block (final) whose Approval logs were applied.
  await db.schema
    .createTable('approval_scan_cursors')
    .addColumn('chain_key', 'text', (c) => c.primaryKey())
    .addColumn('last_block', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['approval_scan_cursors', 'subscription_charges', 'invoices', 'subscriptions', 'payment_methods']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
