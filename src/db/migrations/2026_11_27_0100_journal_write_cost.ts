import { sql, type Kysely } from 'kysely';

// The journal's cost on the watcher's credit path (issue 16, docs/performance.md "Journal cost"). The foreign key from
// journal_legs to journal_entries was checked row by row: one lookup, and one row lock on the entry, per leg, which was
// most of what recording a deposit's entry cost. The statement trigger that already checks every insert into
// journal_legs now also checks that each leg names an existing entry, once per statement, and sums the statement's
// new legs per entry and asset instead of re-reading every touched entry's legs (it merge-joined the whole legs
// index, a cost that grew with the table): equivalent, since every earlier insert was checked the same way.
// Nothing is weaker: a leg naming no entry is refused (foreign_key_violation), an unbalanced entry too, entries and legs
// stay append-only (update and delete refused), and TRUNCATE, which the foreign key used to stop on journal_entries
// alone, is now refused on both tables.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table journal_legs drop constraint journal_legs_entry_id_fkey`.execute(db);
  await sql`
    create or replace function journal_legs_balanced() returns trigger language plpgsql as $$
    declare bad record;
    begin
      -- One pass over what this statement inserted, per entry and asset: the entry must exist (looked up through its
      -- primary key; LIMIT keeps it there whatever the table's size) and the new legs must sum to zero. Every earlier
      -- insert passed this same check and legs are never updated or deleted, so an entry's earlier legs already sum
      -- to zero per asset: all its legs balance exactly when the new ones do, and the old legs need not be read.
      select n.entry_id, k.found_entry, n.asset, n.total into bad
      from (select entry_id, asset, sum(amount) as total from new_legs group by entry_id, asset) n
      left join lateral (select true as found_entry from journal_entries e where e.id = n.entry_id limit 1) k on true
      where k.found_entry is null or n.total <> 0
      limit 1;
      if found then
        if bad.found_entry is null then
          raise exception 'journal legs name entry %, which does not exist', bad.entry_id using errcode = 'foreign_key_violation';
        end if;
        raise exception 'journal entry % is unbalanced in %: legs sum to %', bad.entry_id, bad.asset, bad.total
          using errcode = 'check_violation';
      end if;
      return null;
    end $$`.execute(db);
  for (const t of ['journal_entries', 'journal_legs']) {
    await sql`create trigger ${sql.raw(`${t}_no_truncate`)} before truncate on ${sql.table(t)}
      for each statement execute function journal_append_only()`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['journal_entries', 'journal_legs'])
    await sql`drop trigger ${sql.raw(`${t}_no_truncate`)} on ${sql.table(t)}`.execute(db);
  await sql`
    create or replace function journal_legs_balanced() returns trigger language plpgsql as $$
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
  await sql`alter table journal_legs add constraint journal_legs_entry_id_fkey foreign key (entry_id) references journal_entries(id)`.execute(
    db,
  );
}
