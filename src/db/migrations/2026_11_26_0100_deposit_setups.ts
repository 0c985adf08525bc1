import { sql, type Kysely } from 'kysely';

// Solana deposit setup as an outbound kind (docs/solana.md, docs/outbound.md): one row per deposit token account the
// refunds hot wallet prepares (the deposit owner's associated token account for the session's mint), and its signed
// transactions, persisted before broadcast like payout_attempts. `fee` and `rent_paid` are read from the landed
// transaction and journaled (kind `deposit_setup`) in the transaction that settles the row.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('deposit_setups')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('session_id', 'text', (c) => c.notNull().references('payment_sessions.id'))
    .addColumn('merchant_id', 'text', (c) => c.notNull())
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test', 'live')`))
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('deposit_address', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('processing').check(sql`status in ('processing','succeeded','skipped','failed')`),
    )
    .addColumn('tx_hash', 'text')
    .addColumn('fee', sql`numeric(78,0)`)
    .addColumn('rent_paid', sql`numeric(78,0)`)
    .addColumn('failure_reason', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('settled_at', 'timestamptz')
    .addUniqueConstraint('deposit_setups_account_uq', ['network', 'mode', 'deposit_address', 'token'])
    .execute();
  await sql`create index deposit_setups_open on deposit_setups (created_at) where status = 'processing'`.execute(db);
  await db.schema
    .createTable('deposit_setup_attempts')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('setup_id', 'bigint', (c) => c.notNull().references('deposit_setups.id'))
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
    .addColumn('settled_at', 'timestamptz')
    .addUniqueConstraint('deposit_setup_attempts_tx_uq', ['network', 'mode', 'tx_hash'])
    .execute();
  await db.schema.createIndex('deposit_setup_attempts_setup_idx').on('deposit_setup_attempts').column('setup_id').execute();
  await sql`create unique index deposit_setup_attempts_one_confirmed on deposit_setup_attempts (setup_id) where state = 'confirmed'`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('deposit_setup_attempts').ifExists().execute();
  await db.schema.dropTable('deposit_setups').ifExists().execute();
}
