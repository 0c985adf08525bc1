import { sql, type Kysely } from 'kysely';

// Deposits (issue 3): deposit addresses per session and network, observed token transfers, per-chain watcher
// cursors, and the settlement record of a paid session (the excess of an overpayment).
// Table types: src/db/deposit-tables.ts (DepositTables).
export async function up(db: Kysely<any>): Promise<void> {
  // A session's address on one network. Unique per (network, mode, address): an address belongs to one session.
  await db.schema
    .createTable('deposit_addresses')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test','live')`))
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull().references('payment_sessions.id'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('deposit_addresses_address_uq', ['network', 'mode', 'address'])
    .execute();
  await db.schema.createIndex('deposit_addresses_session_idx').on('deposit_addresses').column('session_id').execute();

  // Every observed incoming transfer to a watched address. Exactly-once by the unique key; status moves
  // provisional → confirmed (final) or provisional → orphaned (reorg) → provisional (landed again).
  await db.schema
    .createTable('deposits')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('tx_hash', 'text', (c) => c.notNull())
    .addColumn('log_index', 'integer', (c) => c.notNull())
    .addColumn('block_number', 'bigint', (c) => c.notNull())
    .addColumn('block_hash', 'text', (c) => c.notNull())
    .addColumn('block_time', 'timestamptz', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('token_contract', 'text', (c) => c.notNull())
    .addColumn('from_address', 'text')
    .addColumn('to_address', 'text', (c) => c.notNull())
    .addColumn('amount_base', sql`numeric(78,0)`, (c) => c.notNull().check(sql`amount_base >= 0`))
    .addColumn('session_id', 'text', (c) => c.references('payment_sessions.id'))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('provisional','confirmed','orphaned')`))
    .addColumn('disposition', 'text', (c) => c.check(sql`disposition in ('credited','unmatched')`))
    .addColumn('unmatched_reason', 'text')
    .addColumn('observed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('confirmed_at', 'timestamptz')
    .addColumn('orphaned_at', 'timestamptz')
    .addUniqueConstraint('deposits_chain_tx_log_uq', ['network', 'mode', 'tx_hash', 'log_index'])
    .addCheckConstraint('deposits_disposition_when_confirmed', sql`(status = 'confirmed') = (disposition is not null)`)
    .execute();
  await sql`create index deposits_provisional_idx on deposits (network, mode, block_number) where status = 'provisional'`.execute(db);
  await db.schema.createIndex('deposits_session_idx').on('deposits').column('session_id').execute();
  await sql`create index deposits_unmatched_idx on deposits (confirmed_at) where disposition = 'unmatched'`.execute(db);

  // One cursor per chain (network:mode). `version` fences writers: a watcher that lost its lock cannot commit.
  await db.schema
    .createTable('chain_cursors')
    .addColumn('chain_key', 'text', (c) => c.primaryKey())
    .addColumn('cursor', 'jsonb', (c) => c.notNull())
    .addColumn('tip_height', 'bigint', (c) => c.notNull())
    .addColumn('tip_time', 'timestamptz', (c) => c.notNull())
    .addColumn('final_height', 'bigint', (c) => c.notNull())
    .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('session_settlements')
    .addColumn('session_id', 'text', (c) => c.primaryKey().references('payment_sessions.id'))
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('due_base', sql`numeric(78,0)`, (c) => c.notNull())
    .addColumn('received_base', sql`numeric(78,0)`, (c) => c.notNull())
    .addColumn('overpaid_base', sql`numeric(78,0)`, (c) => c.notNull())
    .addColumn('paying_deposit_id', 'text', (c) => c.notNull().references('deposits.id'))
    .addColumn('paid_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('session_settlements').ifExists().execute();
  await db.schema.dropTable('chain_cursors').ifExists().execute();
  await db.schema.dropTable('deposits').ifExists().execute();
  await db.schema.dropTable('deposit_addresses').ifExists().execute();
}
