import { sql, type Kysely } from 'kysely';

// The merchant of each deposit on the deposit itself (issue 38, docs/performance.md "Scale"): a merchant's payments
// export over a month read every confirmed deposit of that month (all merchants) and dropped the others on the join to
// payment_sessions; at a million deposits the planner read the whole table instead. With the merchant's id on the row,
// (merchant_id, mode, confirmed_at, id) where confirmed serves that export from its merchant's rows alone.
// - merchant_id is the merchant of the deposit's session (null with no session), set by a BEFORE INSERT trigger from
//   payment_sessions, so that every writer (the watchers, charges, seeds and tests) fills it without knowing it. A
//   session never changes merchant and a deposit never changes session, so it is set once.
// - The backfill is one UPDATE: at a million deposits it takes tens of seconds, holding the rows it updates (inserts of
//   new deposits do not wait on it; a reorg marking old provisional rows orphaned would).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table deposits add column merchant_id text`.execute(db);
  await sql`update deposits d set merchant_id = s.merchant_id from payment_sessions s where s.id = d.session_id`.execute(db);
  await sql`
    create function deposits_set_merchant() returns trigger language plpgsql as $$
    begin
      new.merchant_id := (select s.merchant_id from payment_sessions s where s.id = new.session_id);
      return new;
    end $$`.execute(db);
  await sql`
    create trigger deposits_set_merchant before insert on deposits
    for each row when (new.session_id is not null) execute function deposits_set_merchant()`.execute(db);
  await sql`create index deposits_merchant_confirmed_idx on deposits (merchant_id, mode, confirmed_at, id) where status = 'confirmed'`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists deposits_merchant_confirmed_idx`.execute(db);
  await sql`drop trigger if exists deposits_set_merchant on deposits`.execute(db);
  await sql`drop function if exists deposits_set_merchant()`.execute(db);
  await sql`alter table deposits drop column if exists merchant_id`.execute(db);
}
