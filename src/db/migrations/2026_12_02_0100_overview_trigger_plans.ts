import { sql, type Kysely } from 'kysely';
import { createTrackDepositsV1, createTrackSessionsV1 } from './2026_11_29_0510_overview_daily.js';

// The console overview's statement triggers (2026_11_29_0510_overview_daily.ts) without a join whose cost depends on a
// cached plan (issue 38, docs/performance.md "Catch-up and the overview triggers").
//
// PL/pgSQL plans a statement without parameters once per connection and keeps that plan. A trigger's transition tables
// (old_rows, new_rows) are sized for the planner by the rows they held the FIRST time the statement ran in that
// connection: a watcher whose first deposits update touched one row kept a nested loop joining old_rows to new_rows,
// and its catch-up step confirming 10,000 deposits then compared 100,000,000 pairs (30 s in the trigger, deposits
// credited per second 3,890 -> 379). The reverse is as bad: a plan made for 10,000 rows that hashes or scans a whole
// table, kept for the one-row statements after it.
//
// So no statement here joins two transition tables, nor a transition table to a large table through a join the
// planner may choose:
// - which rows changed is a set difference, old EXCEPT ALL new and new EXCEPT ALL old on the compared columns (hashed
//   or sorted: linear or n log n whatever the estimate); `is distinct from` and EXCEPT agree on nulls;
// - the daily deltas sum every old row at -1 and every new row at +1 per key: an unchanged row cancels itself, and the
//   HAVING already drops keys that sum to nothing, so the result is the one the join computed;
// - a new deposit's session status is read by a scalar subquery per row (the primary key, never pulled up into a
//   join), and a deleted session's paid time by `= any(array(...))` (an index scan of the array, planned as such).
// test/integration/overview-trigger-plans.test.ts runs each trigger first with one row, then with thousands, in one
// connection, and fails when any node of their plans does quadratic work.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function overview_track_sessions() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into overview_daily_deltas
        select r.basis, r.day, r.merchant_id, r.mode, r.network, r.token, sum(r.sessions), sum(r.paid), sum(r.expired),
          sum(r.canceled), sum(r.volume)
        from new_rows s cross join lateral overview_daily_rows(s, 1) r
        group by r.basis, r.day, r.merchant_id, r.mode, r.network, r.token;
        perform overview_paid_times_refresh(array(select id from new_rows where status = 'paid'));
      elsif tg_op = 'DELETE' then
        insert into overview_daily_deltas
        select r.basis, r.day, r.merchant_id, r.mode, r.network, r.token, sum(r.sessions), sum(r.paid), sum(r.expired),
          sum(r.canceled), sum(r.volume)
        from old_rows s cross join lateral overview_daily_rows(s, -1) r
        group by r.basis, r.day, r.merchant_id, r.mode, r.network, r.token;
        delete from overview_paid_times where session_id = any(array(select id from old_rows));
      else
        insert into overview_daily_deltas
        select r.basis, r.day, r.merchant_id, r.mode, r.network, r.token, sum(r.sessions), sum(r.paid), sum(r.expired),
          sum(r.canceled), sum(r.volume)
        from (
          select x.* from old_rows o cross join lateral overview_daily_rows(o, -1) x
          union all
          select x.* from new_rows n cross join lateral overview_daily_rows(n, 1) x
        ) r
        group by r.basis, r.day, r.merchant_id, r.mode, r.network, r.token
        having sum(r.sessions) <> 0 or sum(r.paid) <> 0 or sum(r.expired) <> 0 or sum(r.canceled) <> 0 or sum(r.volume) <> 0;
        perform overview_paid_times_refresh(array(
          select distinct c.id from (
            (select id, status, paid_at, merchant_id, network, mode from old_rows
             except all
             select id, status, paid_at, merchant_id, network, mode from new_rows)
            union all
            (select id, status, paid_at, merchant_id, network, mode from new_rows
             except all
             select id, status, paid_at, merchant_id, network, mode from old_rows)
          ) c
          where c.status = 'paid'));
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create or replace function overview_track_deposits() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        perform overview_paid_times_refresh(array(
          select distinct d.session_id from new_rows d
          where d.session_id is not null
            and (select s.status from payment_sessions s where s.id = d.session_id) = 'paid'));
      elsif tg_op = 'DELETE' then
        perform overview_paid_times_refresh(array(select distinct session_id from old_rows where session_id is not null));
      else
        perform overview_paid_times_refresh(array(
          select distinct c.session_id from (
            (select id, session_id, observed_at from old_rows except all select id, session_id, observed_at from new_rows)
            union all
            (select id, session_id, observed_at from new_rows except all select id, session_id, observed_at from old_rows)
          ) c
          where c.session_id is not null));
      end if;
      return null;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await createTrackSessionsV1(db);
  await createTrackDepositsV1(db);
}
