import { sql, type Kysely } from 'kysely';

// The double-entry journal of on-chain movements (issue 16, docs/journal.md). Append-only: entries and legs are never
// updated or deleted (triggers refuse it); a reorg is undone by reversal entries. Every entry's legs sum to zero per
// asset (checked at the end of each insert statement into journal_legs). Reconciliation runs and their differences
// are stored so that drift shows over time.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table journal_entries (
      id bigserial primary key,
      network text not null,
      mode text not null check (mode in ('test', 'live')),
      tx_hash text not null,
      leg_key text not null,
      revision int not null default 0,
      kind text not null check (kind in ('deposit', 'refund_payout', 'charge', 'deposit_setup', 'sweep', 'top_up', 'unexplained')),
      block_height bigint not null,
      block_hash text,
      merchant_id text,
      session_id text,
      object_type text,
      object_id text,
      reverses_id bigint references journal_entries(id),
      created_at timestamptz not null default now()
    )`.execute(db);
  // Idempotency: one live entry per (network, mode, tx hash, leg key); a reversed one may be recorded again (revision+1).
  await sql`create unique index journal_entries_key on journal_entries (network, mode, tx_hash, leg_key, revision) where reverses_id is null`.execute(
    db,
  );
  await sql`create unique index journal_entries_reversal on journal_entries (reverses_id) where reverses_id is not null`.execute(db);
  await sql`create index journal_entries_height on journal_entries (network, mode, block_height)`.execute(db);
  await sql`create index journal_entries_object on journal_entries (object_type, object_id)`.execute(db);
  await sql`create index journal_entries_unexplained on journal_entries (network, mode, id) where kind = 'unexplained'`.execute(db);
  await sql`
    create table journal_legs (
      entry_id bigint not null references journal_entries(id),
      account text not null,
      asset text not null,
      amount numeric(78,0) not null check (amount <> 0),
      primary key (entry_id, account, asset)
    )`.execute(db);
  await sql`create index journal_legs_account on journal_legs (account, asset)`.execute(db);
  await sql`
    create function journal_legs_balanced() returns trigger language plpgsql as $$
    declare bad record;
    begin
      select l.entry_id, l.asset, sum(l.amount) as total into bad
      from journal_legs l where l.entry_id in (select entry_id from new_legs)
      group by l.entry_id, l.asset having sum(l.amount) <> 0 limit 1;
      if found then
        raise exception 'journal entry % is unbalanced in %: legs sum to %', bad.entry_id, bad.asset, bad.total
          using errcode = 'check_violation';
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger journal_legs_balanced after insert on journal_legs
    referencing new table as new_legs for each statement execute function journal_legs_balanced()`.execute(db);
  await sql`
    create function journal_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'the journal is append-only (% on %)', tg_op, tg_table_name using errcode = 'restrict_violation';
    end $$`.execute(db);
  for (const t of ['journal_entries', 'journal_legs']) {
    await sql`create trigger ${sql.raw(`${t}_append_only`)} before update or delete on ${sql.table(t)}
      for each row execute function journal_append_only()`.execute(db);
  }

  // An operator who looked at an unexplained entry and accepts it (a hot-wallet top-up from the treasury) says so here;
  // reconcile then counts it as part of the books. The entry itself is never changed.
  await sql`
    create table journal_acknowledgements (
      entry_id bigint primary key references journal_entries(id),
      note text not null,
      acknowledged_at timestamptz not null default now()
    )`.execute(db);
  await sql`
    create table journal_wallets (
      network text not null,
      mode text not null check (mode in ('test', 'live')),
      address text not null,
      merchant_id text,
      role text not null,
      registered_at timestamptz not null default now(),
      primary key (network, mode, address)
    )`.execute(db);

  await sql`
    create table reconcile_runs (
      id bigserial primary key,
      network text not null,
      mode text not null check (mode in ('test', 'live')),
      height bigint not null,
      addresses int not null,
      balances int not null,
      differences int not null,
      rpc_calls int not null,
      duration_ms int not null,
      started_at timestamptz not null,
      finished_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index reconcile_runs_chain on reconcile_runs (network, mode, id desc)`.execute(db);
  await sql`
    create table reconcile_differences (
      run_id bigint not null references reconcile_runs(id),
      account text not null,
      asset text not null,
      merchant_id text,
      journal_base numeric(78,0) not null,
      chain_base numeric(78,0) not null,
      difference_base numeric(78,0) not null,
      unexplained_base numeric(78,0) not null,
      primary key (run_id, account, asset)
    )`.execute(db);
  await sql`create index reconcile_differences_account on reconcile_differences (account, asset, run_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table reconcile_differences`.execute(db);
  await sql`drop table reconcile_runs`.execute(db);
  await sql`drop table journal_wallets`.execute(db);
  await sql`drop table journal_acknowledgements`.execute(db);
  await sql`drop table journal_legs`.execute(db);
  await sql`drop table journal_entries`.execute(db);
  await sql`drop function journal_append_only()`.execute(db);
  await sql`drop function journal_legs_balanced()`.execute(db);
}
