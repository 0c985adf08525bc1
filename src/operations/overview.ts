import { sql } from 'kysely';
import { STABLECOIN_EXPONENT } from '../../chains/vocabulary.js';
import type { Db } from '../db/database.js';
import { formatMinor } from '../domain/money.js';
import { createdRates, foldOverviewDeltas, overviewDeltasPending, paidPerDay, timeToPaid } from '../ledger/console/overview-daily.js';
import { consoleWallets } from './wallets.js';
import type { SweepOpsDeps } from './treasury-deps.js';

// The console's overview: the last 30 days per network, token and day, end-state rates, time to paid, refunds in
// flight, failing webhook endpoints, and for operators watcher lag, operator wallets and the last reconcile per chain.
// Volume and rates from daily pre-aggregates kept exact by triggers, time to paid from one row per paid session
// (migration 2026_11_29_0510_overview_daily; docs/console.md, "Overview: what is pre-aggregated").

const DAYS = 30;
/** A merchant's endpoint counts as failing when its last this many finished deliveries all failed. */
const FAILING_AFTER = 5;

export async function overview(d: SweepOpsDeps, q: { merchantId?: string; operator: boolean; now?: Date }) {
  const until = q.now ?? new Date();
  const since = new Date(until.getTime() - DAYS * 86_400_000);
  const m = q.merchantId;
  const db = d.db;

  // Whole days from the pre-aggregates (folded first when changes wait, so reads stay short), the window's partial
  // first and last day from payment_sessions: exact (ledger/console/overview-daily.ts).
  if (await overviewDeltasPending(db)) await foldOverviewDeltas(db);
  let refunds = db
    .selectFrom('refunds')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('status', 'in', ['pending', 'processing']);
  if (m) refunds = refunds.where('merchant_id', '=', m);
  // Independent reads, each one statement: run side by side on the pool (the answer is the same as one after another).
  const [dayRows, r, ttpRows, refundsRow, failing, operatorSide] = await Promise.all([
    paidPerDay(db, since, until, m),
    createdRates(db, since, until, m),
    timeToPaid(db, since, until, m),
    refunds.executeTakeFirst(),
    failingEndpoints(db, m, until),
    q.operator ? operatorParts(d, until) : Promise.resolve({ watchers: [], wallets: null, wallets_error: null, last_reconcile: null }),
  ]);
  const days = { rows: dayRows };
  const ttp = { rows: ttpRows };
  const ended = Number(r.paid) + Number(r.expired) + Number(r.canceled);
  const share = (n: string) => (ended === 0 ? null : Number(n) / ended);
  const inFlight = Number(refundsRow?.n ?? 0);

  return {
    merchant_id: m ?? null,
    since: since.toISOString(),
    until: until.toISOString(),
    days: days.rows.map((x) => ({
      day: x.day,
      network: x.network,
      mode: x.mode,
      token: x.token,
      volume: formatMinor(BigInt(x.volume), STABLECOIN_EXPONENT),
      paid: Number(x.paid),
    })),
    rates: {
      created: Number(r.created),
      paid: Number(r.paid),
      expired: Number(r.expired),
      canceled: Number(r.canceled),
      paid_rate: share(r.paid),
      expired_rate: share(r.expired),
      canceled_rate: share(r.canceled),
    },
    time_to_paid: ttp.rows.map((x) => ({
      network: x.network,
      mode: x.mode,
      median_seconds: x.median === null ? null : Math.round(Number(x.median)),
      samples: Number(x.samples),
    })),
    refunds_in_flight: { count: inFlight },
    failing_webhook_endpoints: failing,
    ...operatorSide,
  };
}

/** Merchants whose last FAILING_AFTER finished deliveries all failed (candidates: a failure in the last 7 days). */
async function failingEndpoints(db: Db, merchantId: string | undefined, until: Date) {
  const merchant = merchantId ? sql`and d.merchant_id = ${merchantId}` : sql``;
  const rows = await sql<{
    merchant_id: string;
    url: string | null;
    failed: string;
    last_failure_at: Date | null;
    last_error: string | null;
  }>`
    select c.merchant_id, m.webhook_url as url, last.failed::text as failed, last.last_failure_at, last.last_error
    from (select distinct d.merchant_id from webhook_deliveries d
          where d.status in ('failed', 'skipped') and d.failed_at >= ${new Date(until.getTime() - 7 * 86_400_000)} ${merchant}) c
    join merchants m on m.id = c.merchant_id
    join lateral (
      select count(*) filter (where x.status = 'failed') as failed, count(*) as n, max(x.failed_at) as last_failure_at,
        (array_agg(x.last_error order by x.created_at desc))[1] as last_error
      from (select status, failed_at, last_error, created_at from webhook_deliveries
            where merchant_id = c.merchant_id and status in ('delivered', 'failed')
            order by created_at desc limit ${FAILING_AFTER}) x
    ) last on last.n = ${FAILING_AFTER} and last.failed = ${FAILING_AFTER}
    order by c.merchant_id`.execute(db);
  return rows.rows.map((x) => ({
    merchant_id: x.merchant_id,
    url: x.url,
    failed_deliveries: Number(x.failed),
    last_failure_at: x.last_failure_at ? new Date(x.last_failure_at).toISOString() : null,
    last_error: x.last_error,
  }));
}

async function operatorParts(d: SweepOpsDeps, until: Date) {
  const cursors = await d.db
    .selectFrom('chain_cursors')
    .select(['chain_key', 'tip_height', 'final_height', 'tip_time', 'updated_at'])
    .execute();
  const runs = await sql<{
    id: string;
    network: string;
    mode: 'test' | 'live';
    height: string;
    differences: number;
    started_at: Date;
    finished_at: Date;
  }>`
    select distinct on (network, mode) id::text, network, mode, height::text, differences, started_at, finished_at
    from reconcile_runs order by network, mode, id desc`.execute(d.db);
  const w = await consoleWallets(d, {}, { timeoutMs: 3_000 });
  return {
    watchers: cursors.map((c) => ({
      chain_key: c.chain_key,
      tip_height: c.tip_height.toString(),
      final_height: c.final_height.toString(),
      lag_blocks: (c.tip_height - c.final_height).toString(),
      tip_time: c.tip_time ? new Date(c.tip_time).toISOString() : null,
      updated_at: c.updated_at ? new Date(c.updated_at).toISOString() : null,
      seconds_since_update: c.updated_at ? Math.round((until.getTime() - new Date(c.updated_at).getTime()) / 1000) : null,
    })),
    wallets: w.data.map((x) => ({
      network: x.network,
      mode: x.mode,
      role: x.role,
      merchant_id: x.merchant_id,
      address: x.address,
      native: x.native,
      balance: x.balance,
      needed: x.next_sweep_plan?.needed ?? null,
      shortfall: x.next_sweep_plan?.shortfall ?? null,
      below_threshold: x.next_sweep_plan ? x.next_sweep_plan.shortfall !== '0' : null,
      ...(x.error ? { error: x.error } : {}),
    })),
    wallets_error: w.error,
    last_reconcile: runs.rows.map((x) => ({
      network: x.network,
      mode: x.mode,
      run_id: x.id,
      height: x.height,
      differences: x.differences,
      started_at: new Date(x.started_at).toISOString(),
      finished_at: new Date(x.finished_at).toISOString(),
    })),
  };
}
