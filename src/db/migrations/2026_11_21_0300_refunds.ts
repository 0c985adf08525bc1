import { sql, type Kysely } from 'kysely';

// Refunds (issue 5): the merchant-facing refund, the on-chain payout attempts behind it, hot-wallet nonces and
// receipt counters. Table types: src/ledger/refund-schema.ts.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('refunds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test','live')`))
    .addColumn('refund_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull().references('payment_sessions.id'))
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('amount_minor', 'bigint', (c) => c.notNull().check(sql`amount_minor > 0`))
    .addColumn('currency', 'text', (c) => c.notNull().check(sql`currency in ('USDT','USDC')`))
    .addColumn('reason', 'text')
    .addColumn('description', 'text')
    .addColumn('metadata', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('pending').check(sql`status in ('pending','processing','completed','failed','canceled')`),
    )
    .addColumn('failure_reason', 'text')
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('destination_address', 'text', (c) => c.notNull())
    .addColumn('amount_base', sql`numeric(78,0)`, (c) => c.notNull().check(sql`amount_base > 0`))
    .addColumn('request_fingerprint', 'text', (c) => c.notNull())
    .addColumn('transaction_hash', 'text')
    .addColumn('receipt_number', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // Set by the transaction that stores the signed payout: from then on the refund can no longer be canceled.
    .addColumn('signed_at', 'timestamptz')
    .addColumn('processed_at', 'timestamptz')
    .addColumn('canceled_at', 'timestamptz')
    .addUniqueConstraint('refunds_merchant_refund_id_uq', ['merchant_id', 'mode', 'refund_id'])
    .addUniqueConstraint('refunds_receipt_uq', ['merchant_id', 'receipt_number'])
    .execute();
  await db.schema.createIndex('refunds_session_idx').on('refunds').column('session_id').execute();
  await db.schema.createIndex('refunds_list_idx').on('refunds').columns(['merchant_id', 'mode', 'created_at', 'id']).execute();
  await sql`create index refunds_open_idx on refunds (created_at) where status in ('pending','processing')`.execute(db);

  // On-chain attempts of one refund. The signed bytes and hash are stored BEFORE broadcasting (state 'signed'), so a
  // crash at any point re-broadcasts the same bytes instead of paying twice. A replacement (fee bump at the same
  // nonce, or a re-sign after a proven expiry) is a new attempt; at most one attempt of a refund can be confirmed.
  await db.schema
    .createTable('payout_attempts')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('refund_id', 'text', (c) => c.notNull().references('refunds.id'))
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('sender', 'text', (c) => c.notNull())
    .addColumn('nonce', sql`numeric(78,0)`)
    .addColumn('tx_hash', 'text', (c) => c.notNull())
    .addColumn('signed', 'jsonb', (c) => c.notNull())
    .addColumn('state', 'text', (c) =>
      c.notNull().defaultTo('signed').check(sql`state in ('signed','broadcast','confirmed','failed','replaced','dropped')`),
    )
    .addColumn('fee_bump_percent', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('detail', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('broadcast_at', 'timestamptz')
    .addColumn('settled_at', 'timestamptz')
    .addUniqueConstraint('payout_attempts_tx_uq', ['network', 'mode', 'tx_hash'])
    .execute();
  await db.schema.createIndex('payout_attempts_refund_idx').on('payout_attempts').column('refund_id').execute();
  await sql`create unique index payout_attempts_one_confirmed on payout_attempts (refund_id) where state = 'confirmed'`.execute(db);

  // Next nonce per hot wallet (EVM). Assigned under a row lock in the transaction that stores the signed bytes:
  // gapless, and never two payouts with one nonce.
  await db.schema
    .createTable('hot_wallet_nonces')
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('next_nonce', sql`numeric(78,0)`, (c) => c.notNull())
    .addPrimaryKeyConstraint('hot_wallet_nonces_pk', ['network', 'mode', 'address'])
    .execute();

  await db.schema
    .createTable('receipt_counters')
    .addColumn('merchant_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('last', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('receipt_counters_pk', ['merchant_id', 'day'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['receipt_counters', 'hot_wallet_nonces', 'payout_attempts', 'refunds'])
    await db.schema.dropTable(t).ifExists().execute();
}
