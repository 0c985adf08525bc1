import { sql, type Kysely } from 'kysely';

// Every signed transaction of a subscription charge (issue 9): the first, fee-bumped replacements at the same nonce,
// and fresh attempts after an earlier one provably expired (TRON, Solana). A charge is settled by whichever of its
// live attempts lands; at most one can, because replacements share a nonce and fresh attempts are signed only once
// every earlier attempt is proven dead. The charge row keeps the newest attempt's hash and bytes for readers.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('subscription_charge_attempts')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('charge_id', 'bigint', (c) => c.notNull().references('subscription_charges.id'))
    .addColumn('nonce', sql`numeric(78,0)`)
    .addColumn('tx_hash', 'text', (c) => c.notNull())
    .addColumn('signed', 'jsonb', (c) => c.notNull())
    .addColumn('fee_bump_percent', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('live').check(sql`state in ('live','dropped')`))
    .addColumn('dropped_reason', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('subscription_charge_attempts_tx_uq', ['charge_id', 'tx_hash'])
    .execute();
  await sql`create index subscription_charge_attempts_charge_idx on subscription_charge_attempts (charge_id, id)`.execute(db);
  // Looked up by hash alone: is an Approval log one of our own charges (src/ledger/subscriptions/lifecycle.ts)?
  await sql`create index subscription_charge_attempts_tx_idx on subscription_charge_attempts (tx_hash)`.execute(db);
  // Charges signed before this migration: their one attempt.
  await sql`insert into subscription_charge_attempts (charge_id, nonce, tx_hash, signed, created_at, state)
    select id, nonce, tx_hash, signed, coalesce(signed_at, created_at), case when state in ('signed','broadcast') then 'live' else 'dropped' end
    from subscription_charges where tx_hash is not null and signed is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('subscription_charge_attempts').ifExists().execute();
}
