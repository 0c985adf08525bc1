import { sql, type Kysely } from 'kysely';

// The restore guard of families without account nonces (issue 36, "Restores never pay twice"; docs/outbound.md
// "Transactions the ledger does not know"). Before a TRON or Solana wallet's first send after a start, the outbound
// engine lists the wallet's recent outgoing transactions on chain and notes here every one the ledger does not know
// (no attempt of any kind has its hash): the wallet's sends wait while a noted row is neither accepted nor recorded
// since as an attempt (`payouts settle-from-chain`). `payouts wallet-accept-transactions` accepts rows with who did it
// and why (accepted_at, accepted_by, note). The index on subscription_charges.tx_hash serves the "known" lookup.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table hot_wallet_unknown_transactions (
      id bigserial primary key,
      network text not null,
      mode text not null,
      address text not null,
      tx_hash text not null,
      chain_time timestamptz,
      failed boolean not null default false,
      seen_at timestamptz not null default now(),
      accepted_at timestamptz,
      accepted_by text,
      note text,
      constraint hot_wallet_unknown_transactions_tx_uq unique (network, mode, tx_hash),
      check ((accepted_at is null) = (accepted_by is null))
    )`.execute(db);
  await sql`
    create index hot_wallet_unknown_transactions_open on hot_wallet_unknown_transactions (network, mode, address)
      where accepted_at is null`.execute(db);
  await sql`create index subscription_charges_tx_hash_idx on subscription_charges (tx_hash) where tx_hash is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists subscription_charges_tx_hash_idx`.execute(db);
  await sql`drop table if exists hot_wallet_unknown_transactions`.execute(db);
}
