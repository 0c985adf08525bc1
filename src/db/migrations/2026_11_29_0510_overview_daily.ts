import { sql, type Kysely } from 'kysely';

// The console overview's pre-aggregates (issue 35, Performance; docs/console.md "Overview: what is pre-aggregated"),
// kept exact by triggers in the transaction of every change they count:
// - overview_daily: per UTC day, merchant and mode, sessions by the day they were created (with how many of them are
//   paid, expired, canceled) and by the day they were paid (per network and token, with the volume the overview sums).
//   Statement triggers on payment_sessions append the change of the rows' contributions (−old, +new, summed per day
//   and key) to overview_daily_deltas:
//   inserts only, so concurrent writers never wait on a shared counter row nor deadlock on one. Deltas are folded into
//   overview_daily by one statement (ledger/console/overview-daily.ts); a reader sums both, so a fold never changes
//   an answer.
// - overview_paid_times: one row per paid session that has a deposit: paid_at and the seconds from its first deposit
//   seen, the overview's median time to paid without a deposit lookup per session. Written by statement triggers on
//   payment_sessions and deposits (the first deposit can only change when a deposit does), set-based per statement.
// The overview reads whole days from these and the partial first and last day of its window from payment_sessions.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table overview_daily (
      basis text not null check (basis in ('created', 'paid')),
      day date not null,
      merchant_id text not null,
      mode text not null,
      network text not null,
      token text not null,
      sessions bigint not null,
      paid bigint not null,
      expired bigint not null,
      canceled bigint not null,
      volume numeric not null,
      -- The counts in the key's index too: a window's days are an index-only read, wherever their rows lie.
      primary key (basis, day, merchant_id, mode, network, token) include (sessions, paid, expired, canceled, volume)
    )`.execute(db);
  await sql`
    create table overview_daily_deltas (
      basis text not null, day date not null, merchant_id text not null, mode text not null, network text not null,
      token text not null, sessions bigint not null, paid bigint not null, expired bigint not null,
      canceled bigint not null, volume numeric not null
    )`.execute(db);
  await sql`create index overview_daily_deltas_day_idx on overview_daily_deltas (basis, day)`.execute(db);
  // A row's contribution, signed: created on its created day; paid (with network, token and volume) on its paid day.
  await sql`
    create function overview_daily_rows(r payment_sessions, g int) returns setof overview_daily_deltas
    language sql immutable as $$
      select 'created', (r.created_at at time zone 'UTC')::date, r.merchant_id, r.mode, '', '', g::bigint,
        (g * (r.status = 'paid')::int)::bigint, (g * (r.status = 'expired')::int)::bigint,
        (g * (r.status = 'canceled')::int)::bigint, 0::numeric
      union all
      select 'paid', (r.paid_at at time zone 'UTC')::date, r.merchant_id, r.mode, coalesce(r.network, ''),
        coalesce(r.token, ''), g::bigint, 0, 0, 0,
        (g * coalesce(case r.token when 'USDT' then r.quote_usdt_minor when 'USDC' then r.quote_usdc_minor end,
                      r.target_amount_minor))::numeric
      where r.status = 'paid' and r.paid_at is not null
    $$`.execute(db);
  await sql`
    create table overview_paid_times (
      session_id text primary key,
      merchant_id text not null,
      network text,
      mode text not null,
      paid_at timestamptz not null,
      seconds double precision not null
    )`.execute(db);
  await sql`create index overview_paid_times_paid_idx on overview_paid_times (paid_at) include (network, mode, seconds)`.execute(db);
  await sql`create index overview_paid_times_merchant_idx on overview_paid_times (merchant_id, paid_at)
            include (network, mode, seconds)`.execute(db);
  // The time-to-paid rows of these sessions, recomputed from payment_sessions and deposits (set-based).
  await sql`
    create function overview_paid_times_refresh(ids text[]) returns void language plpgsql as $$
    begin
      if cardinality(ids) = 0 then return; end if;
      delete from overview_paid_times where session_id = any(ids);
      insert into overview_paid_times (session_id, merchant_id, network, mode, paid_at, seconds)
      select s.id, s.merchant_id, s.network, s.mode, s.paid_at, extract(epoch from s.paid_at - f.first_at)::double precision
      from payment_sessions s
      join lateral (select min(dp.observed_at) as first_at from deposits dp where dp.session_id = s.id) f on f.first_at is not null
      where s.id = any(ids) and s.status = 'paid' and s.paid_at is not null;
    end $$`.execute(db);
  // Statement-level triggers over the statement's transition tables: one set-based pass per statement, so the
  // watcher's batch credit (a thousand sessions paid by one UPDATE) pays once, not once per row.
  await createTrackSessionsV1(db);
  await sql`create trigger payment_sessions_overview_insert after insert on payment_sessions
            referencing new table as new_rows for each statement execute function overview_track_sessions()`.execute(db);
  await sql`create trigger payment_sessions_overview_update after update on payment_sessions
            referencing old table as old_rows new table as new_rows for each statement execute function overview_track_sessions()`.execute(
    db,
  );
  await sql`create trigger payment_sessions_overview_delete after delete on payment_sessions
            referencing old table as old_rows for each statement execute function overview_track_sessions()`.execute(db);
  // A paid session's first deposit changes only when a deposit of it is written, moved, re-timed or deleted.
  await createTrackDepositsV1(db);
  await sql`create trigger deposits_overview_insert after insert on deposits
            referencing new table as new_rows for each statement execute function overview_track_deposits()`.execute(db);
  await sql`create trigger deposits_overview_update after update on deposits
            referencing old table as old_rows new table as new_rows for each statement execute function overview_track_deposits()`.execute(
    db,
  );
  await sql`create trigger deposits_overview_delete after delete on deposits
            referencing old table as old_rows for each statement execute function overview_track_deposits()`.execute(db);

  // TRUNCATE fires no row or statement trigger of the kinds above: its own triggers empty what it would leave stale.
  await sql`
    create function overview_sessions_truncated() returns trigger language plpgsql as $$
    begin
      truncate overview_daily, overview_daily_deltas, overview_paid_times;
      return null;
    end $$`.execute(db);
  await sql`create trigger payment_sessions_overview_truncate after truncate on payment_sessions
            for each statement execute function overview_sessions_truncated()`.execute(db);
  await sql`
    create function overview_deposits_truncated() returns trigger language plpgsql as $$
    begin
      truncate overview_paid_times;
      return null;
    end $$`.execute(db);
  await sql`create trigger deposits_overview_truncate after truncate on deposits
            for each statement execute function overview_deposits_truncated()`.execute(db);

  // Backfill from the rows already there.
  await sql`
    insert into overview_daily
    select r.basis, r.day, r.merchant_id, r.mode, r.network, r.token, sum(r.sessions), sum(r.paid), sum(r.expired),
      sum(r.canceled), sum(r.volume)
    from payment_sessions s cross join lateral overview_daily_rows(s, 1) r
    group by r.basis, r.day, r.merchant_id, r.mode, r.network, r.token`.execute(db);
  await sql`
    insert into overview_paid_times (session_id, merchant_id, network, mode, paid_at, seconds)
    select s.id, s.merchant_id, s.network, s.mode, s.paid_at, extract(epoch from s.paid_at - f.first_at)::double precision
    from payment_sessions s
    join lateral (select min(dp.observed_at) as first_at from deposits dp where dp.session_id = s.id) f on f.first_at is not null
    where s.status = 'paid' and s.paid_at is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [t, table] of [
    ['deposits_overview_insert', 'deposits'],
    ['deposits_overview_update', 'deposits'],
    ['deposits_overview_delete', 'deposits'],
    ['payment_sessions_overview_insert', 'payment_sessions'],
    ['payment_sessions_overview_update', 'payment_sessions'],
    ['payment_sessions_overview_delete', 'payment_sessions'],
    ['payment_sessions_overview_truncate', 'payment_sessions'],
    ['deposits_overview_truncate', 'deposits'],
  ] as const)
    await sql`drop trigger if exists ${sql.id(t)} on ${sql.table(table)}`.execute(db);
  await sql`drop function if exists overview_sessions_truncated()`.execute(db);
  await sql`drop function if exists overview_deposits_truncated()`.execute(db);
  await sql`drop function if exists overview_track_deposits()`.execute(db);
  await sql`drop function if exists overview_track_sessions()`.execute(db);
  await sql`drop function if exists overview_paid_times_refresh(text[])`.execute(db);
  await sql`drop function if exists overview_daily_rows(payment_sessions, int)`.execute(db);
  await sql`drop table if exists overview_paid_times`.execute(db);
  await sql`drop table if exists overview_daily_deltas`.execute(db);
  await sql`drop table if exists overview_daily`.execute(db);
}

/** This migration's trigger function, as it first was (2026_12_02_0100_overview_trigger_plans.ts replaces it; its down restores this). */
export async function createTrackSessionsV1(db: Kysely<any>): Promise<void> {
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
        delete from overview_paid_times where session_id in (select id from old_rows);
      else
        insert into overview_daily_deltas
        select r.basis, r.day, r.merchant_id, r.mode, r.network, r.token, sum(r.sessions), sum(r.paid), sum(r.expired),
          sum(r.canceled), sum(r.volume)
        from old_rows o join new_rows n on n.id = o.id
        cross join lateral (
          select * from overview_daily_rows(o, -1) union all select * from overview_daily_rows(n, 1)
        ) r
        where (o.status, o.paid_at, o.created_at, o.merchant_id, o.mode, o.network, o.token, o.quote_usdt_minor,
               o.quote_usdc_minor, o.target_amount_minor)
              is distinct from
              (n.status, n.paid_at, n.created_at, n.merchant_id, n.mode, n.network, n.token, n.quote_usdt_minor,
               n.quote_usdc_minor, n.target_amount_minor)
        group by r.basis, r.day, r.merchant_id, r.mode, r.network, r.token
        having sum(r.sessions) <> 0 or sum(r.paid) <> 0 or sum(r.expired) <> 0 or sum(r.canceled) <> 0 or sum(r.volume) <> 0;
        perform overview_paid_times_refresh(array(
          select n.id from old_rows o join new_rows n on n.id = o.id
          where (n.status = 'paid' or o.status = 'paid')
            and (o.status, o.paid_at, o.merchant_id, o.network, o.mode) is distinct from
                (n.status, n.paid_at, n.merchant_id, n.network, n.mode)));
      end if;
      return null;
    end $$`.execute(db);
}

/** This migration's trigger function, as it first was (2026_12_02_0100_overview_trigger_plans.ts replaces it; its down restores this). */
export async function createTrackDepositsV1(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function overview_track_deposits() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        perform overview_paid_times_refresh(array(
          select distinct d.session_id from new_rows d join payment_sessions s on s.id = d.session_id where s.status = 'paid'));
      elsif tg_op = 'DELETE' then
        perform overview_paid_times_refresh(array(select distinct session_id from old_rows where session_id is not null));
      else
        perform overview_paid_times_refresh(array(
          select distinct x.sid from old_rows o join new_rows n on n.id = o.id
          cross join lateral (values (o.session_id), (n.session_id)) x(sid)
          where x.sid is not null
            and (o.session_id is distinct from n.session_id or o.observed_at is distinct from n.observed_at)));
      end if;
      return null;
    end $$`.execute(db);
}
