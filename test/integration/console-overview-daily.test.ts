import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { createdRates, foldOverviewDeltas, paidPerDay, timeToPaid } from '../../src/ledger/console/overview-daily.js';
import { expireSession } from '../../src/ledger/payments/sessions.js';
import { cancelPayment, findPayment } from '../../src/operations/payments.js';
import { type ConsoleHarness, startConsoleHarness } from '../support/console-harness.js';
import { merchantIdOf, seedConsoleData, sessionIdOf } from '../support/console-seed.js';
import { markSessionPaid } from '../support/paid-session.js';

// The overview's pre-aggregates (migration 2026_11_29_0510_overview_daily) are exact: after sessions are created,
// paid, expired, canceled, refunded, re-attributed and deleted, and a deposit seen earlier than the first arrives,
// the volume per day, the end-state rates and the median time to paid read from them equal a recomputation from the
// raw rows (the overview's queries before the pre-aggregates) for windows that start and end mid-day, at midnight,
// shorter than a day, for every merchant and for one; before and after the deltas are folded.

let h: ConsoleHarness;
const now = new Date();

/** The overview's queries over payment_sessions and deposits only (as they were before the pre-aggregates). */
async function raw(db: Db, since: Date, until: Date, m: string | undefined) {
  const merchant = m ? sql`and s.merchant_id = ${m}` : sql``;
  const days = await sql`
    select to_char(date_trunc('day', s.paid_at at time zone 'UTC'), 'YYYY-MM-DD') as day, s.network, s.mode, s.token,
      sum(coalesce(case s.token when 'USDT' then s.quote_usdt_minor when 'USDC' then s.quote_usdc_minor end, s.target_amount_minor))::text as volume,
      count(*)::text as paid
    from payment_sessions s
    where s.status = 'paid' and s.paid_at >= ${since} and s.paid_at < ${until} and s.network is not null and s.token is not null ${merchant}
    group by 1, 2, 3, 4 order by 1, 2, 3, 4`.execute(db);
  const rates = await sql`
    select count(*)::text as created, count(*) filter (where s.status = 'paid')::text as paid,
      count(*) filter (where s.status = 'expired')::text as expired, count(*) filter (where s.status = 'canceled')::text as canceled
    from payment_sessions s where s.created_at >= ${since} and s.created_at < ${until} ${merchant}`.execute(db);
  const ttp = await sql`
    select s.network, s.mode,
      percentile_cont(0.5) within group (order by extract(epoch from s.paid_at - f.first_at)) as median, count(*)::text as samples
    from payment_sessions s
    join lateral (select min(dp.observed_at) as first_at from deposits dp where dp.session_id = s.id) f on f.first_at is not null
    where s.status = 'paid' and s.paid_at >= ${since} and s.paid_at < ${until} and s.network is not null ${merchant}
    group by 1, 2 order by 1, 2`.execute(db);
  return { days: days.rows, rates: rates.rows[0], ttp: ttp.rows };
}

async function fromAggregates(db: Db, since: Date, until: Date, m: string | undefined) {
  return {
    days: await paidPerDay(db, since, until, m),
    rates: await createdRates(db, since, until, m),
    ttp: await timeToPaid(db, since, until, m),
  };
}

const DAY = 86_400_000;
const midnight = new Date(Math.floor(now.getTime() / DAY) * DAY);
const windows: [string, Date, Date][] = [
  ['30 days to now', new Date(now.getTime() - 30 * DAY), now],
  ['a year to now', new Date(now.getTime() - 366 * DAY), now],
  ['midnight to midnight', new Date(midnight.getTime() - 40 * DAY), midnight],
  ['mid-day to mid-day', new Date(midnight.getTime() - 100 * DAY + 3_600_000), new Date(midnight.getTime() - 60 * DAY + 7_777_000)],
  ['shorter than a day', new Date(midnight.getTime() - 200 * DAY + 1_000), new Date(midnight.getTime() - 199 * DAY - 1_000)],
  ['into the future', new Date(now.getTime() - 3 * DAY), new Date(now.getTime() + 3 * DAY)],
];

async function expectExact(label: string): Promise<number> {
  let compared = 0;
  for (const m of [undefined, merchantIdOf(2), merchantIdOf(7)]) {
    for (const [name, since, until] of windows) {
      const want = await raw(h.t.db, since, until, m);
      const got = await fromAggregates(h.t.db, since, until, m);
      expect(got, `${label}: ${name}, ${m ?? 'every merchant'}`).toEqual(want);
      compared += want.days.length;
    }
  }
  return compared;
}

beforeAll(async () => {
  h = await startConsoleHarness();
  await seedConsoleData(h.t.db, { merchants: 10, sessions: 3_000, refunds: 300, deliveries: 300, now, box: h.ops.box });
}, 60_000);

afterAll(async () => {
  await h?.close();
});

describe('overview pre-aggregates', () => {
  it('equal a recomputation from the raw rows after every kind of change, before and after a fold', async () => {
    const db = h.t.db;
    // The seed's inserts went through the triggers: compare with deltas unfolded, then folded.
    expect(await expectExact('seeded, unfolded')).toBeGreaterThan(100);
    expect(await foldOverviewDeltas(db)).toBeGreaterThan(100);
    const pending = await sql<{ n: string }>`select count(*)::text as n from overview_daily_deltas`.execute(db);
    expect(pending.rows[0]!.n).toBe('0');
    await expectExact('seeded, folded');

    // Open sessions (i ≡ 19 mod 20; merchant 1 + i % 10): pay some, cancel some, expire some, through the ledger's
    // own functions; a session created today is paid with a deposit (time to paid).
    const open = (k: number) => sessionIdOf(20 * k + 19);
    await markSessionPaid(db, open(1), { receivedBase: 5_000_000n, network: 'tron' });
    await markSessionPaid(db, open(2), { receivedBase: 7_000_000n, token: 'USDC' });
    await cancelPayment(h.ops, await findPayment(h.ops, open(3)));
    await sql`update payment_sessions set expires_at = now() - interval '1 second' where id in (${open(4)}, ${open(5)})`.execute(db);
    const deps = { tokenDecimals: () => 6 };
    expect(await expireSession(db, open(4), deps)).toBe('expired');
    expect(await expireSession(db, open(5), deps)).toBe('expired');
    await expectExact('after payments, a cancel and expiries');

    // A refund changes no session count; a deposit seen before the first one moves the time to paid; a deposit moved
    // to another session, one deleted; a session's network changed; a paid session deleted with its rows.
    // A refund and its completion (as the payout engine writes them) touch no column the overview counts.
    await sql`insert into refunds (id, merchant_id, mode, refund_id, session_id, order_id, amount_minor, currency, status,
        network, token, destination_address, amount_base, request_fingerprint)
      select 'rf_exact', merchant_id, mode, 'exact-1', id, order_id, 1, 'USDT', 'pending', network, token, 'to', 10000, 'fp'
      from payment_sessions where id = ${open(1)}`.execute(db);
    await sql`update refunds set status = 'completed', transaction_hash = 'rtx', processed_at = now() where id = 'rf_exact'`.execute(db);
    const paid = sessionIdOf(61);
    await sql`insert into deposits (id, network, mode, tx_hash, log_index, block_number, block_hash, block_time, token,
        token_contract, to_address, amount_base, session_id, status, disposition, observed_at, confirmed_at)
      select 'dep_early', network, mode, 'early-tx', 0, 1, 'b', created_at, token, 'c', deposit_address, 1, id, 'confirmed',
        'credited', created_at + interval '1 second', created_at + interval '2 seconds'
      from payment_sessions where id = ${paid}`.execute(db);
    await sql`update deposits set session_id = ${sessionIdOf(81)} where id = 'dep_early'`.execute(db);
    await sql`update deposits set observed_at = observed_at - interval '3 seconds' where session_id = ${sessionIdOf(101)}`.execute(db);
    await sql`update payment_sessions set network = 'solana' where id = ${sessionIdOf(121)}`.execute(db);
    await sql`update payment_sessions set status = 'expired', paid_at = null, expired_at = now() where id = ${sessionIdOf(141)}`.execute(
      db,
    );
    const doomed = sessionIdOf(161);
    for (const t of ['webhook_deliveries', 'outbox_events'])
      await sql`delete from ${sql.table(t)} where ${sql.ref(t === 'outbox_events' ? 'aggregate_id' : 'event_id')} in
        (${t === 'outbox_events' ? doomed : sql`select id from outbox_events where aggregate_id = ${doomed}`})`.execute(db);
    await sql`delete from payout_attempts where refund_id in (select id from refunds where session_id = ${doomed})`.execute(db);
    await sql`delete from refunds where session_id = ${doomed}`.execute(db);
    await sql`delete from deposits where session_id = ${doomed}`.execute(db);
    await sql`delete from payment_sessions where id = ${doomed}`.execute(db);
    await expectExact('after a refund, deposit changes, a re-attribution and a deletion');

    // Folding again changes no answer.
    expect(await foldOverviewDeltas(db)).toBeGreaterThan(0);
    await expectExact('folded again');

    // TRUNCATE fires none of the row or statement triggers: its own triggers empty the pre-aggregates with it.
    await sql`truncate deposits cascade`.execute(db);
    await expectExact('deposits truncated');
    await sql`truncate payment_sessions cascade`.execute(db);
    await expectExact('sessions truncated');
    const left = await sql<{ n: string }>`select ((select count(*) from overview_daily) + (select count(*) from overview_daily_deltas)
      + (select count(*) from overview_paid_times))::text as n`.execute(db);
    expect(left.rows[0]!.n).toBe('0');
  }, 60_000);
});
