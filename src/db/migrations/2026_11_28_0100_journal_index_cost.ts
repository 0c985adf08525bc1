import { sql, type Kysely } from 'kysely';

// The journal's cost on the watcher's credit path, second step (issue 16, docs/performance.md "Journal cost"): every
// deposit writes one entry and two legs, and each row pays for every index on its table. Three index writes per
// deposit go that no query needs:
// - journal_entries_object (object_type, object_id): no service query reads it; operators and tests look entries up
//   by business object. It now leaves out deposit entries (one per deposit: the bulk of the table), which are found
//   by their key instead (network, mode, tx hash, leg key `log:<index>`: journal_entries_key); refunds, invoices,
//   sweeps, sessions and wallets are still found by object through it.
// - journal_legs_account (account, asset): its `external` legs (one per deposit, the same key every time) are left
//   out; nobody asks for the external account's history, and every lookup of one of our addresses' legs is by an
//   `address:` (or `fees:`, `treasury:`) account, which the partial index still serves.
// - the foreign key journal_entries.reverses_id → journal_entries.id queued a check event for every inserted entry,
//   nearly all with no reverses_id. A row trigger with a WHEN condition is queued only for reversals, and refuses
//   one naming no entry (foreign_key_violation, as the key did). Entries are never updated, deleted or truncated
//   (triggers), so the row a reversal names cannot go away and the key's lock is not needed.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index journal_entries_object`.execute(db);
  await sql`create index journal_entries_object on journal_entries (object_type, object_id) where object_type <> 'deposit'`.execute(db);
  await sql`drop index journal_legs_account`.execute(db);
  await sql`create index journal_legs_account on journal_legs (account, asset) where account <> 'external'`.execute(db);
  await sql`alter table journal_entries drop constraint journal_entries_reverses_id_fkey`.execute(db);
  await sql`
    create function journal_reversal_names_entry() returns trigger language plpgsql as $$
    begin
      if not exists (select 1 from journal_entries e where e.id = new.reverses_id) then
        raise exception 'journal entry % reverses entry %, which does not exist', new.id, new.reverses_id
          using errcode = 'foreign_key_violation';
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger journal_entries_reversal_names_entry after insert on journal_entries
    for each row when (new.reverses_id is not null) execute function journal_reversal_names_entry()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger journal_entries_reversal_names_entry on journal_entries`.execute(db);
  await sql`drop function journal_reversal_names_entry()`.execute(db);
  await sql`alter table journal_entries add constraint journal_entries_reverses_id_fkey foreign key (reverses_id) references journal_entries(id)`.execute(
    db,
  );
  await sql`drop index journal_legs_account`.execute(db);
  await sql`create index journal_legs_account on journal_legs (account, asset)`.execute(db);
  await sql`drop index journal_entries_object`.execute(db);
  await sql`create index journal_entries_object on journal_entries (object_type, object_id)`.execute(db);
}
