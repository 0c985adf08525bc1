import { sql } from 'kysely';
import type { Db } from '../../db/database.js';

// The overview's counts over a window, from the pre-aggregates of migration 2026_11_29_0510_overview_daily for the
// whole UTC days inside it and from payment_sessions for its partial first and last day. Each function is one
// statement (one snapshot), so it sees a change either in overview_daily_deltas or folded into overview_daily, never
// in both or in neither; its answer is the one a scan of payment_sessions over the window gives
// (test/integration/console-overview-daily.test.ts compares them).

const DAY_MS = 86_400_000;

/** The window split at UTC midnights: [since, firstDay) and [lastDay, until) from rows, days in between aggregated. */
function split(since: Date, until: Date): { firstDay: Date; lastDay: Date } {
  const firstDay = new Date(Math.ceil(since.getTime() / DAY_MS) * DAY_MS);
  const lastDay = new Date(Math.floor(until.getTime() / DAY_MS) * DAY_MS);
  // A window shorter than a whole day: no aggregated day, all from rows.
  if (firstDay.getTime() >= lastDay.getTime()) return { firstDay: until, lastDay: until };
  return { firstDay, lastDay };
}

const dayOf = (d: Date): string => d.toISOString().slice(0, 10);

export interface OverviewDayRow {
  day: string;
  network: string;
  mode: 'test' | 'live';
  token: string;
  volume: string;
  paid: string;
}

/** Paid sessions per UTC day (of paid_at), network, mode and token, with the volume; ordered by those. */
export async function paidPerDay(db: Db, since: Date, until: Date, merchantId: string | undefined): Promise<OverviewDayRow[]> {
  const { firstDay, lastDay } = split(since, until);
  const m = (alias: string) => (merchantId ? sql`and ${sql.ref(`${alias}.merchant_id`)} = ${merchantId}` : sql``);
  const days = (table: string) => sql`
    select to_char(a.day, 'YYYY-MM-DD') as day, a.network, a.mode, a.token, a.volume, a.sessions as paid
    from ${sql.table(table)} a
    where a.basis = 'paid' and a.day >= ${dayOf(firstDay)}::date and a.day < ${dayOf(lastDay)}::date
      and a.network <> '' and a.token <> '' ${m('a')}`;
  const r = await sql<OverviewDayRow>`
    select day, network, mode, token, sum(volume)::text as volume, sum(paid)::text as paid
    from (
      ${days('overview_daily')}
      union all ${days('overview_daily_deltas')}
      union all
      select to_char(date_trunc('day', s.paid_at at time zone 'UTC'), 'YYYY-MM-DD'), s.network, s.mode, s.token,
        coalesce(case s.token when 'USDT' then s.quote_usdt_minor when 'USDC' then s.quote_usdc_minor end, s.target_amount_minor),
        1
      from payment_sessions s
      where s.status = 'paid' and ((s.paid_at >= ${since} and s.paid_at < ${firstDay}) or (s.paid_at >= ${lastDay} and s.paid_at < ${until}))
        and s.network is not null and s.token is not null ${m('s')}
    ) x
    group by 1, 2, 3, 4 having sum(paid) <> 0 order by 1, 2, 3, 4`.execute(db);
  return r.rows;
}

export interface OverviewRatesRow {
  created: string;
  paid: string;
  expired: string;
  canceled: string;
}

/** Sessions created in the window, and how many of them are paid, expired and canceled now. */
export async function createdRates(db: Db, since: Date, until: Date, merchantId: string | undefined): Promise<OverviewRatesRow> {
  const { firstDay, lastDay } = split(since, until);
  const m = (alias: string) => (merchantId ? sql`and ${sql.ref(`${alias}.merchant_id`)} = ${merchantId}` : sql``);
  const days = (table: string) => sql`
    select a.sessions, a.paid, a.expired, a.canceled from ${sql.table(table)} a
    where a.basis = 'created' and a.day >= ${dayOf(firstDay)}::date
      and a.day < ${dayOf(lastDay)}::date ${m('a')}`;
  const r = await sql<OverviewRatesRow>`
    select coalesce(sum(sessions), 0)::text as created, coalesce(sum(paid), 0)::text as paid,
      coalesce(sum(expired), 0)::text as expired, coalesce(sum(canceled), 0)::text as canceled
    from (
      ${days('overview_daily')}
      union all ${days('overview_daily_deltas')}
      union all
      select 1, (s.status = 'paid')::int, (s.status = 'expired')::int, (s.status = 'canceled')::int
      from payment_sessions s
      where ((s.created_at >= ${since} and s.created_at < ${firstDay}) or (s.created_at >= ${lastDay} and s.created_at < ${until})) ${m('s')}
    ) x`.execute(db);
  return r.rows[0] ?? { created: '0', paid: '0', expired: '0', canceled: '0' };
}

export interface OverviewTimeToPaidRow {
  network: string;
  mode: 'test' | 'live';
  median: number | null;
  samples: string;
}

/** Median seconds from a paid session's first deposit seen to paid, per network and mode, of sessions paid in the window. */
export async function timeToPaid(db: Db, since: Date, until: Date, merchantId: string | undefined): Promise<OverviewTimeToPaidRow[]> {
  const m = merchantId ? sql`and t.merchant_id = ${merchantId}` : sql``;
  const r = await sql<OverviewTimeToPaidRow>`
    select t.network, t.mode, percentile_cont(0.5) within group (order by t.seconds) as median, count(*)::text as samples
    from overview_paid_times t
    where t.paid_at >= ${since} and t.paid_at < ${until} and t.network is not null ${m}
    group by 1, 2 order by 1, 2`.execute(db);
  return r.rows;
}

/** A constant of this module: the advisory lock that lets one fold run at a time (others skip; the next read folds). */
const FOLD_LOCK = 'overview_daily_fold';

/**
 * Folds overview_daily_deltas into overview_daily in one statement (delete … returning, then an upsert of the sums),
 * so every delta is counted exactly once; answers do not change (readers sum both tables). Returns the rows folded, or
 * null when another fold holds the lock.
 */
export async function foldOverviewDeltas(db: Db): Promise<number | null> {
  return db.transaction().execute(async (tx) => {
    const lock = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(hashtextextended(${FOLD_LOCK}, 0)) as ok`.execute(tx);
    if (!lock.rows[0]?.ok) return null;
    const r = await sql<{ n: string }>`
      with moved as (delete from overview_daily_deltas returning *),
      summed as (
        select basis, day, merchant_id, mode, network, token, sum(sessions) as sessions, sum(paid) as paid,
          sum(expired) as expired, sum(canceled) as canceled, sum(volume) as volume, count(*) as n
        from moved group by basis, day, merchant_id, mode, network, token
      ),
      upserted as (
        insert into overview_daily (basis, day, merchant_id, mode, network, token, sessions, paid, expired, canceled, volume)
        select basis, day, merchant_id, mode, network, token, sessions, paid, expired, canceled, volume from summed
        on conflict (basis, day, merchant_id, mode, network, token) do update set
          sessions = overview_daily.sessions + excluded.sessions, paid = overview_daily.paid + excluded.paid,
          expired = overview_daily.expired + excluded.expired, canceled = overview_daily.canceled + excluded.canceled,
          volume = overview_daily.volume + excluded.volume
        returning 1
      )
      select coalesce((select sum(n) from summed), 0)::text as n, (select count(*) from upserted) as upserted`.execute(tx);
    return Number(r.rows[0]?.n ?? 0);
  });
}

/** Whether deltas wait to be folded (a cheap look: one row is enough). */
export async function overviewDeltasPending(db: Db): Promise<boolean> {
  const r = await sql<{ x: number }>`select 1 as x from overview_daily_deltas limit 1`.execute(db);
  return r.rows.length > 0;
}
