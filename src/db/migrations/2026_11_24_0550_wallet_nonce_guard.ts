import { sql, type Kysely } from 'kysely';

// The outbound engine's guard against transactions the ledger does not know (issue 17: a restored backup, or the hot
// wallet's key used by hand). When a wallet's pending nonce on chain is ahead of its stored next nonce, the engine
// signs nothing from it and notes what it saw on the nonce row (`unknown_chain_nonce`, `unknown_seen_at`) until an
// operator checks the chain and accepts the chain's nonce (`payouts wallet-accept-nonce`), which is recorded in
// `hot_wallet_nonce_acceptances` with who did it and why.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('hot_wallet_nonces')
    .addColumn('unknown_chain_nonce', sql`numeric(78,0)`)
    .addColumn('unknown_seen_at', 'timestamptz')
    .execute();
  await db.schema
    .createTable('hot_wallet_nonce_acceptances')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('previous_next_nonce', sql`numeric(78,0)`, (c) => c.notNull())
    .addColumn('accepted_next_nonce', sql`numeric(78,0)`, (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('note', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('hot_wallet_nonce_acceptances').ifExists().execute();
  await db.schema.alterTable('hot_wallet_nonces').dropColumn('unknown_seen_at').dropColumn('unknown_chain_nonce').execute();
}
