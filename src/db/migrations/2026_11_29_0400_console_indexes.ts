import { sql, type Kysely } from 'kysely';

// Indexes of the console's lists and search (issue 35; docs/performance.md): each serves one keyset walk or one exact
// lookup the console makes at a million rows, so no console query scans a large table.
// - payment_sessions (created_at, id), (merchant_id, created_at, id): the payments list newest first, of every merchant
//   or of one merchant in both modes (payment_sessions_list_idx leads with (merchant_id, mode)).
// - payment_sessions (amount_minor, id), (merchant_id, amount_minor, id): the payments list sorted by amount.
// - payment_sessions (order_id), (deposit_address): search by order id or deposit address, any merchant.
// - payment_sessions (created_at, id) where expired or canceled with money received: the stranded-money list.
// - deposits (tx_hash): search by transaction hash; refunds (transaction_hash): the same for payouts.
// - refunds (created_at, id), (merchant_id, created_at, id): the refunds list (refunds_list_idx leads with mode).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index payment_sessions_created_idx on payment_sessions (created_at, id)`.execute(db);
  await sql`create index payment_sessions_merchant_created_idx on payment_sessions (merchant_id, created_at, id)`.execute(db);
  await sql`create index payment_sessions_amount_idx on payment_sessions (amount_minor, id)`.execute(db);
  await sql`create index payment_sessions_merchant_amount_idx on payment_sessions (merchant_id, amount_minor, id)`.execute(db);
  await sql`create index payment_sessions_order_id_idx on payment_sessions (order_id)`.execute(db);
  await sql`create index payment_sessions_deposit_address_idx on payment_sessions (deposit_address) where deposit_address is not null`.execute(
    db,
  );
  await sql`create index payment_sessions_stranded_idx on payment_sessions (created_at, id)
            where status in ('expired', 'canceled') and received_base > 0`.execute(db);
  await sql`create index deposits_tx_hash_idx on deposits (tx_hash)`.execute(db);
  await sql`create index refunds_created_idx on refunds (created_at, id)`.execute(db);
  await sql`create index refunds_merchant_created_idx on refunds (merchant_id, created_at, id)`.execute(db);
  await sql`create index refunds_transaction_hash_idx on refunds (transaction_hash) where transaction_hash is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const name of [
    'refunds_transaction_hash_idx',
    'refunds_merchant_created_idx',
    'refunds_created_idx',
    'deposits_tx_hash_idx',
    'payment_sessions_stranded_idx',
    'payment_sessions_deposit_address_idx',
    'payment_sessions_order_id_idx',
    'payment_sessions_merchant_amount_idx',
    'payment_sessions_amount_idx',
    'payment_sessions_merchant_created_idx',
    'payment_sessions_created_idx',
  ]) {
    await sql`drop index if exists ${sql.id(name)}`.execute(db);
  }
}
