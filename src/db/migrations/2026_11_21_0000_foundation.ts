import { sql, type Kysely } from 'kysely';

// Foundation: merchants, API keys, HD accounts, payment sessions, idempotency records, the transactional outbox.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('merchants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('webhook_url', 'text')
    .addColumn('webhook_secret_enc', 'text', (c) => c.notNull())
    .addColumn('session_lifetime_seconds', 'integer', (c) => c.notNull().defaultTo(1800))
    .addColumn('refund_window_days', 'integer', (c) => c.notNull().defaultTo(180))
    .addColumn('daily_refund_count_limit', 'integer', (c) => c.notNull().defaultTo(100))
    .addColumn('daily_refund_amount_limit_minor', 'bigint', (c) => c.notNull().defaultTo(10_000_000))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // One BIP44 account per merchant and mode (decisions.md: funds of merchants never share addresses).
  await db.schema
    .createTable('merchant_hd_accounts')
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test','live')`))
    .addColumn('account_index', 'serial', (c) => c.notNull().unique())
    .addPrimaryKeyConstraint('merchant_hd_accounts_pk', ['merchant_id', 'mode'])
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test','live')`))
    .addColumn('key_prefix', 'text', (c) => c.notNull().unique())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('secret_enc', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('last_used_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('api_keys_merchant_idx').on('api_keys').column('merchant_id').execute();

  // Deposit address indexes come from one global sequence: unique per session, never reused, no row lock on create.
  await sql`create sequence session_address_index_seq as bigint minvalue 0 start 0`.execute(db);

  await db.schema
    .createTable('payment_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test','live')`))
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('amount_minor', 'bigint', (c) => c.notNull().check(sql`amount_minor > 0`))
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('merchant_domain_id', 'text')
    .addColumn('line_items', 'jsonb')
    .addColumn('tax_minor', 'bigint')
    .addColumn('shipping_minor', 'bigint')
    .addColumn('success_url', 'text')
    .addColumn('cancel_url', 'text')
    .addColumn('metadata', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('target_currency', 'text', (c) => c.notNull().check(sql`target_currency in ('USDT','USDC')`))
    .addColumn('target_amount_minor', 'bigint', (c) => c.notNull().check(sql`target_amount_minor > 0`))
    .addColumn('exchange_rate', 'text')
    .addColumn('rate_locked_at', 'timestamptz')
    .addColumn('network', 'text')
    .addColumn('token', 'text')
    .addColumn('hd_account', 'integer', (c) => c.notNull())
    .addColumn('address_index', 'bigint', (c) => c.notNull().unique().defaultTo(sql`nextval('session_address_index_seq')`))
    .addColumn('deposit_address', 'text')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('open').check(sql`status in ('open','paid','expired','canceled')`))
    .addColumn('received_base', sql`numeric(78,0)`, (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('paid_at', 'timestamptz')
    .addColumn('canceled_at', 'timestamptz')
    .addColumn('expired_at', 'timestamptz')
    .addUniqueConstraint('payment_sessions_order_uq', ['merchant_id', 'mode', 'order_id'])
    .execute();
  await db.schema
    .createIndex('payment_sessions_list_idx')
    .on('payment_sessions')
    .columns(['merchant_id', 'mode', 'created_at', 'id'])
    .execute();
  await sql`create index payment_sessions_open_expiry_idx on payment_sessions (expires_at) where status = 'open'`.execute(db);

  // Idempotency by constraint: the primary key rejects the twin of a concurrent first request.
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('merchant_id', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer', (c) => c.notNull())
    .addColumn('response_body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['merchant_id', 'mode', 'scope', 'key'])
    .execute();

  // Outbox. Event ids are evt_<nanoseconds>: microsecond clock × 1000 + a sequence modulo 1000, so two events
  // never share an id unless 1000 of them start in one microsecond.
  await sql`create sequence outbox_event_id_seq`.execute(db);
  await sql`
    create function next_event_id() returns text language sql volatile as $$
      select 'evt_' || ((floor(extract(epoch from clock_timestamp()) * 1000000))::bigint * 1000
                        + nextval('outbox_event_id_seq') % 1000)::text
    $$`.execute(db);
  await db.schema
    .createTable('outbox_events')
    .addColumn('seq', 'bigserial', (c) => c.primaryKey())
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('aggregate_id', 'text')
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('relayed_at', 'timestamptz')
    .execute();
  await sql`create index outbox_events_unrelayed_idx on outbox_events (seq) where relayed_at is null`.execute(db);
  await db.schema.createIndex('outbox_events_aggregate_idx').on('outbox_events').column('aggregate_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['outbox_events', 'idempotency_keys', 'payment_sessions', 'api_keys', 'merchant_hd_accounts', 'merchants']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
  await sql`drop function if exists next_event_id()`.execute(db);
  await sql`drop sequence if exists outbox_event_id_seq`.execute(db);
  await sql`drop sequence if exists session_address_index_seq`.execute(db);
}
