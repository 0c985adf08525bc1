import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectPlans, type ExplainedStatement, explainToClient, heaviestNode } from '../support/auto-explain.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

// The console overview's statement triggers (migrations 2026_11_29_0510_overview_daily and
// 2026_12_02_0100_overview_trigger_plans) do work linear in the rows a statement changed, whatever plan PL/pgSQL
// cached for them earlier in the connection. A watcher's connection first runs them on one row (a deposit seen at the
// tip), keeps those plans, and later confirms thousands of deposits in one statement (a catch-up): the triggers'
// nested loop over old_rows x new_rows made that step quadratic (30 s for 10,000 deposits).
//
// One connection, as the watcher has: every trigger runs first on one row, then on N rows. auto_explain sends the plan
// of every statement the triggers run (nested statements, with actual row counts) to this client as a notice; the test
// fails when any plan node handled more than a few rows per changed row (rows out and rows removed by filters, over
// all its loops). On the earlier trigger bodies the UPDATE of N deposits shows a node with N x N rows.

const N = 2000;
/** Rows one plan node may handle per row changed by the statement (a hash join's or set operation's passes). */
const PER_ROW = 10;

let t: TestDatabase;
let c: pg.Client;
const plans: ExplainedStatement[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
  c = new pg.Client({ connectionString: t.url });
  await c.connect();
  collectPlans(c, plans);
  await c.query(`insert into merchants (id, name, webhook_secret_enc) values ('mch_t', 'T', 'sealed')`);
  await c.query(
    `insert into payment_sessions (id, merchant_id, mode, order_id, amount_minor, currency, target_currency, target_amount_minor,
       hd_account, network, token, deposit_address, expires_at)
     select 'cs_t' || i, 'mch_t', 'test', 'o' || i, 100, 'USDT', 'USDT', 100, 1, 'ethereum', 'USDT',
       '0x' || lpad(to_hex(i), 40, '0'), now() + interval '1 day'
     from generate_series(0, $1::int) i`,
    [N],
  );
  await explainToClient(c, { nested: true });
}, 60_000);

afterAll(async () => {
  await c?.end();
  await t?.destroy();
});

const deposits = (from: number, to: number) =>
  c.query(
    `insert into deposits (id, network, mode, tx_hash, log_index, block_number, block_hash, block_time, token, token_contract,
       from_address, to_address, amount_base, session_id, status)
     select 'dep_t' || i, 'ethereum', 'test', '0xt' || i, 0, 100 + i, '0xh', now(), 'USDT', '0xc', '0xf',
       '0x' || lpad(to_hex(i), 40, '0'), 1000000, 'cs_t' || i, 'provisional'
     from generate_series($1::int, $2::int) i`,
    [from, to],
  );
const confirm = (ids: string[]) =>
  c.query(
    `update deposits set status = 'confirmed', confirmed_at = now(), disposition = 'credited', observed_at = observed_at - interval '1 second'
     where id = any($1::text[])`,
    [ids],
  );
const pay = (ids: string[]) =>
  c.query(`update payment_sessions set status = 'paid', paid_at = now(), received_base = 1000000 where id = any($1::text[])`, [ids]);
const ids = (prefix: string, from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `${prefix}${from + i}`);

describe('overview triggers: linear work whatever plan the connection cached first', () => {
  it('one row first, then N rows: no plan node of the N-row statements handles more than a few rows per changed row', async () => {
    // The tip: one deposit seen, confirmed, its session paid (each trigger branch planned and cached on one row).
    await deposits(0, 0);
    await confirm(['dep_t0']);
    await pay(['cs_t0']);
    await deposits(-1, -1).catch(() => {}); // (no session -1: the foreign key refuses it; the insert branch is planned)
    plans.length = 0;

    // The catch-up: N deposits seen, then confirmed, then their sessions paid, one statement each.
    await deposits(1, N);
    await confirm(ids('dep_t', 1, N));
    await pay(ids('cs_t', 1, N));

    const nested = plans.filter((p) => /old_rows|new_rows/.test(p.query));
    expect(nested.length).toBeGreaterThanOrEqual(4); // the triggers' statements were seen, not just the outer ones
    const worst = nested
      .map((p) => ({ query: p.query.replace(/\s+/g, ' ').slice(0, 160), ...heaviestNode(p.plan) }))
      .sort((a, b) => b.work - a.work)[0]!;
    expect(worst.work, `${worst.where} in: ${worst.query}`).toBeLessThanOrEqual(PER_ROW * N);
  }, 120_000);

  it('the aggregates the triggers keep still equal a recomputation from the rows', async () => {
    const times = await c.query<{ n: string }>(
      `select count(*)::text as n from overview_paid_times t join payment_sessions s on s.id = t.session_id
       where s.status = 'paid'
         and t.seconds = extract(epoch from s.paid_at - (select min(d.observed_at) from deposits d where d.session_id = s.id))`,
    );
    expect(Number(times.rows[0]!.n)).toBe(N + 1);
    const total = await c.query<{ n: string }>(`select count(*)::text as n from overview_paid_times`);
    expect(Number(total.rows[0]!.n)).toBe(N + 1);
    const paid = await c.query<{ folded: string; raw: string }>(
      `select (select coalesce(sum(paid), 0) from (select paid from overview_daily where basis = 'created'
                union all select paid from overview_daily_deltas where basis = 'created') x)::text as folded,
              (select count(*) from payment_sessions where status = 'paid')::text as raw`,
    );
    expect(paid.rows[0]!.folded).toBe(paid.rows[0]!.raw);
    expect(Number(paid.rows[0]!.raw)).toBe(N + 1);
  });
});
