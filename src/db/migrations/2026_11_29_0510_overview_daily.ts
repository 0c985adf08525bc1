import { sql, type Kysely } from 'kysely';

// The console overview's pre-aggregates (issue 35, Performance; docs/console.md "Overview: what is pre-aggregated"),
// kept exact by triggers in the transaction of every change they count:
// - overview_daily: per UTC day, merchant and mode, sessions by the day they were created (with how many of them are
//   paid, expired, canceled) and by the day they were paid (per network and token, with the volume the overview sums).
//   A trigger on payment_sessions appends the change of a row's contribution (−old, +new) to overview_daily_deltas:
//   inserts only, so concurrent writers never wait on a shared counter row nor deadlock on one. Deltas are folded into
//   overview_daily by one statement (ledger/console/overview-daily.ts); a reader sums both, so a fold never changes
//   an answer.
// - overview_paid_times: one row per paid session that has a deposit: paid_at and the seconds from its first deposit
//   seen, the overview's median time to paid without a deposit lookup per session. Written by triggers on
//   payment_sessions and deposits (the first deposit can only change when a deposit does).
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
      primary key (basis, day, merchant_id, mode, network, token)
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
    create function overview_daily_track() returns trigger language plpgsql as $$
    begin
      if tg_op in ('UPDATE', 'DELETE') then
        insert into overview_daily_deltas select * from overview_daily_rows(old, -1);
      end if;
      if tg_op in ('INSERT', 'UPDATE') then
        insert into overview_daily_deltas select * from overview_daily_rows(new, 1);
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger payment_sessions_overview_daily after insert or delete on payment_sessions
      for each row execute function overview_daily_track()`.execute(db);
  await sql`
    create trigger payment_sessions_overview_daily_update
      after update of status, paid_at, created_at, merchant_id, mode, network, token, quote_usdt_minor,
        quote_usdc_minor, target_amount_minor on payment_sessions
      for each row
      when ((old.status, old.paid_at, old.created_at, old.merchant_id, old.mode, old.network, old.token,
             old.quote_usdt_minor, old.quote_usdc_minor, old.target_amount_minor)
            is distinct from
            (new.status, new.paid_at, new.created_at, new.merchant_id, new.mode, new.network, new.token,
             new.quote_usdt_minor, new.quote_usdc_minor, new.target_amount_minor))
      execute function overview_daily_track()`.execute(db);

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
  await sql`
    create function overview_paid_time_refresh(sid text) returns void language plpgsql as $$
    begin
      delete from overview_paid_times where session_id = sid;
      insert into overview_paid_times (session_id, merchant_id, network, mode, paid_at, seconds)
      select s.id, s.merchant_id, s.network, s.mode, s.paid_at, extract(epoch from s.paid_at - f.first_at)::double precision
      from payment_sessions s
      join lateral (select min(dp.observed_at) as first_at from deposits dp where dp.session_id = s.id) f on f.first_at is not null
      where s.id = sid and s.status = 'paid' and s.paid_at is not null;
    end $$`.execute(db);
  await sql`
    create function overview_paid_time_track_session() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        delete from overview_paid_times where session_id = old.id;
      elsif new.status = 'paid' or (tg_op = 'UPDATE' and old.status = 'paid') then
        perform overview_paid_time_refresh(new.id);
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger payment_sessions_overview_paid_times
      after insert or delete or update of status, paid_at, merchant_id, network, mode on payment_sessions
      for each row execute function overview_paid_time_track_session()`.execute(db);
  await sql`
    create function overview_paid_time_track_deposit() returns trigger language plpgsql as $$
    begin
      if tg_op in ('UPDATE', 'DELETE') and old.session_id is not null then
        perform overview_paid_time_refresh(old.session_id);
      end if;
      if tg_op in ('INSERT', 'UPDATE') and new.session_id is not null
         and (tg_op = 'INSERT' or new.session_id is distinct from old.session_id) then
        perform overview_paid_time_refresh(new.session_id);
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger deposits_overview_paid_times
      after insert or delete or update of session_id, observed_at on deposits
      for each row execute function overview_paid_time_track_deposit()`.execute(db);

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
  await sql`drop trigger if exists deposits_overview_paid_times on deposits`.execute(db);
  await sql`drop trigger if exists payment_sessions_overview_paid_times on payment_sessions`.execute(db);
  await sql`drop trigger if exists payment_sessions_overview_daily_update on payment_sessions`.execute(db);
  await sql`drop trigger if exists payment_sessions_overview_daily on payment_sessions`.execute(db);
  await sql`drop function if exists overview_paid_time_track_deposit()`.execute(db);
  await sql`drop function if exists overview_paid_time_track_session()`.execute(db);
  await sql`drop function if exists overview_paid_time_refresh(text)`.execute(db);
  await sql`drop function if exists overview_daily_track()`.execute(db);
  await sql`drop function if exists overview_daily_rows(payment_sessions, int)`.execute(db);
  await sql`drop table if exists overview_paid_times`.execute(db);
  await sql`drop table if exists overview_daily_deltas`.execute(db);
  await sql`drop table if exists overview_daily`.execute(db);
}
