// Subscription charging benchmark (issue 9). Prints figures; never fails on a timing.
//   npx tsx scripts/bench/subscriptions.ts [--subscriptions 10000] [--customers 100] [--schedulers 2] [--concurrency 16] [--block-time 1]
// Local only: a fresh Postgres database on 127.0.0.1 (dropped at the end) and an Anvil node on a random port.
// N subscriptions of `customers` wallets (each approves once for all of its subscriptions) fall due at the same
// instant; `schedulers` scheduler loops (own connection pools) run until every period is charged. Measured: charges
// per second from one charger wallet, time until the last charge, and periods charged twice (must be 0), counted
// on chain.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Contract, id as keccak, zeroPadValue } from 'ethers';
import { sql } from 'kysely';
import pg from 'pg';
import { createDb } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { ManualClock } from '../../src/domain/clock.js';
import { runSchedulerTick } from '../../src/subscriptions/scheduler.js';
import { DEFAULT_SUBSCRIPTION_SETTINGS } from '../../src/domain/subscription-settings.js';
import { subscriptionEngineDeps } from '../../src/subscriptions/worker.js';
import { startAnvil } from '../../test/support/anvil.js';
import { deployTokens, fund, makeAdapter, signer, walletAt } from '../../test/support/evm-tokens/scenario.js';
import { ChainRegistry } from '../../chains/chain-registry.js';

const { values } = parseArgs({
  options: {
    subscriptions: { type: 'string', default: '10000' },
    customers: { type: 'string', default: '100' },
    schedulers: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '16' },
    'block-time': { type: 'string', default: '0' },
  },
});
const N = Number(values.subscriptions);
const CUSTOMERS = Math.min(Number(values.customers), N);
const SCHEDULERS = Number(values.schedulers);
const CONCURRENCY = Number(values.concurrency);
const ADMIN = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const dbName = `bench_subs_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: ADMIN });
await admin.connect();
await admin.query(`create database ${dbName}`);
const url = new URL(ADMIN);
url.pathname = `/${dbName}`;
const db = createDb(url.toString(), 10);
// --block-time 0: Anvil mines one block per transaction (automine); > 0: interval mining, many charges per block,
// as on a real chain.
const BLOCK_TIME = Number(values['block-time']);
const node = await startAnvil({ chainId: 31337, extraArgs: ['--gas-limit', '300000000'] });
try {
  await migrateToLatest(db);
  const [usdt] = await deployTokens(node, [{ symbol: 'USDT', shape: 'tether', decimals: 6 }]);
  const adapter = makeAdapter(node, [usdt!], { confirmation: { kind: 'depth', confirmations: 1 } });
  const adapters = new ChainRegistry([adapter]);
  const now = new Date();
  const clock = new ManualClock(now);
  const deps = subscriptionEngineDeps({
    db,
    adapters,
    signer,
    settings: DEFAULT_SUBSCRIPTION_SETTINGS,
    checkoutBaseUrl: 'http://localhost/pay',
    clock,
  });

  await db.insertInto('merchants').values({ id: 'mch_bench', name: 'bench', webhook_url: null, webhook_secret_enc: 'x' }).execute();
  await db.insertInto('merchant_hd_accounts').values({ merchant_id: 'mch_bench', mode: 'test' }).execute();
  const w = await deps.walletResolver.wallets('mch_bench', 'test', 'ethereum');
  await node.rpc('anvil_setBalance', [w.charger, '0x3635c9adc5dea00000']); // 1000 ETH

  // Customers: funded, each approving the charger once for all its subscriptions (1.00 USDT each).
  const perCustomer = Math.ceil(N / CUSTOMERS);
  const setupStart = Date.now();
  for (let c = 0; c < CUSTOMERS; c++) {
    const wallet = walletAt(1000 + c, node.provider);
    await node.rpc('anvil_setBalance', [wallet.address, '0xde0b6b3a7640000']);
    await fund(usdt!, wallet.address, BigInt(perCustomer) * 1_000_000n);
    const token = new Contract(usdt!.address, ['function approve(address spender, uint256 value)'], wallet);
    await (
      await (token.getFunction('approve') as (s: string, v: bigint) => Promise<{ wait(): Promise<unknown> }>)(
        w.charger,
        BigInt(perCustomer) * 1_000_000n,
      )
    ).wait();
    await db
      .insertInto('payment_methods')
      .values({
        id: `pm_bench${c}`,
        merchant_id: 'mch_bench',
        mode: 'test',
        customer: `cus_${c}`,
        network: 'ethereum',
        token: 'USDT',
        owner_address: wallet.address.toLowerCase(),
        spender_address: w.charger,
        allowance_base: BigInt(perCustomer) * 1_000_000n,
        approval_tx_hash: `0xbench${c}`,
        approval_log_index: 0,
      })
      .execute();
  }
  // N active subscriptions whose period ends now: all due at the same instant.
  await sql`insert into subscriptions (id, merchant_id, mode, customer, currency, price_id, product, unit_amount_minor, interval, quantity,
              status, payment_method_id, current_period_start, current_period_end, billing_cycle_anchor, period_number, paid_periods,
              next_action, next_action_at)
            select 'sub_bench' || i, 'mch_bench', 'test', 'cus_' || (i % ${CUSTOMERS}), 'USD', 'p', 'Bench', 100, 'month', 1,
                   'active', 'pm_bench' || (i % ${CUSTOMERS}), ${new Date(now.getTime() - 30 * 86_400_000)}::timestamptz, ${now}::timestamptz,
                   ${new Date(now.getTime() - 30 * 86_400_000)}::timestamptz, 1, 1, 'renew', ${now}::timestamptz
            from generate_series(0, ${N - 1}) i`.execute(db);
  if (BLOCK_TIME > 0) {
    await node.rpc('evm_setAutomine', [false]);
    await node.rpc('evm_setIntervalMining', [BLOCK_TIME]);
  }
  console.log(`setup: ${CUSTOMERS} customers, ${N} subscriptions due in ${((Date.now() - setupStart) / 1000).toFixed(1)} s`);

  const pools = Array.from({ length: SCHEDULERS }, () => createDb(url.toString(), CONCURRENCY + 4));
  const schedulers = pools.map((p) =>
    subscriptionEngineDeps({
      db: p,
      adapters,
      signer,
      settings: DEFAULT_SUBSCRIPTION_SETTINGS,
      checkoutBaseUrl: 'http://localhost/pay',
      clock,
    }),
  );
  const started = Date.now();
  let firstCharge = 0;
  await Promise.all(
    schedulers.map(async (d) => {
      for (;;) {
        const r = await runSchedulerTick(d, { maxDue: 1000, chargeConcurrency: CONCURRENCY });
        if (r.chargesSettled > 0 && firstCharge === 0) firstCharge = Date.now();
        if (r.due === 0 && r.chargesOpen === 0 && r.chargesSettled === 0) {
          const left = await db
            .selectFrom('subscription_charges')
            .select('id')
            .where('state', 'in', ['pending', 'signed', 'broadcast'])
            .limit(1)
            .execute();
          const due = await db.selectFrom('subscriptions').select('id').where('next_action_at', '<=', now).limit(1).execute();
          if (left.length === 0 && due.length === 0) return;
        }
      }
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  const stats = await sql<{ succeeded: number; failed: number; twice: number }>`
    select count(*) filter (where state = 'succeeded')::int as succeeded, count(*) filter (where state = 'failed')::int as failed,
           (select count(*)::int from (select invoice_id from subscription_charges where state = 'succeeded' group by 1 having count(*) > 1) x) as twice
    from subscription_charges`.execute(db);
  const invoices = await sql<{
    n: number;
    dup: number;
  }>`select count(*)::int as n, (select count(*)::int from (select subscription_id, period_number from invoices group by 1, 2 having count(*) > 1) x) as dup from invoices`.execute(
    db,
  );
  const logs = await node.rpc<unknown[]>('eth_getLogs', [
    {
      fromBlock: '0x0',
      toBlock: 'latest',
      address: usdt!.address,
      topics: [keccak('Transfer(address,address,uint256)'), null, zeroPadValue(w.settlement, 32)],
    },
  ]);
  const s = stats.rows[0]!;
  console.log(
    JSON.stringify(
      {
        subscriptions: N,
        schedulers: SCHEDULERS,
        concurrency: CONCURRENCY,
        block_time_s: BLOCK_TIME,
        charges_succeeded: s.succeeded,
        charges_failed: s.failed,
        invoices: invoices.rows[0]!.n,
        periods_invoiced_twice: invoices.rows[0]!.dup,
        periods_charged_twice: s.twice,
        transfers_on_chain: logs.length,
        seconds_until_last_charge: Number(elapsed.toFixed(2)),
        charges_per_second: Number((s.succeeded / elapsed).toFixed(1)),
        seconds_to_first_charge: firstCharge ? Number(((firstCharge - started) / 1000).toFixed(2)) : null,
      },
      null,
      2,
    ),
  );
  await Promise.all(pools.map((p) => p.destroy()));
} finally {
  await db.destroy();
  await node.stop();
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
