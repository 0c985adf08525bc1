// EVM watcher benchmark (issue 3). Prints figures; never fails on a timing.
//   npx tsx scripts/bench/evm-watcher.ts [--addresses 100000] [--blocks 10] [--per-block 1000]
// Local only: a fresh Postgres database on 127.0.0.1 (dropped at the end) and an Anvil node on a random port.
// Addresses are synthetic (0x00..0i) so that setting up 100,000 sessions takes seconds; the watcher never derives keys.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { sql } from 'kysely';
import { Contract, parseUnits } from 'ethers';
import { createDb } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { NetworkWatcher } from '../../src/watcher/network-watcher.js';
import { startAnvil } from '../../test/support/anvil.js';
import { deployBatcher } from '../../test/support/evm-tokens/deploy.js';
import { deployTokens, fund, makeAdapter, walletAt } from '../../test/support/evm-tokens/scenario.js';

const { values } = parseArgs({
  options: {
    addresses: { type: 'string', default: '100000' },
    blocks: { type: 'string', default: '10' },
    'per-block': { type: 'string', default: '1000' },
  },
});
const ADDRESSES = Number(values.addresses);
const PER_BLOCK = Number(values['per-block']);
// Catch-up pays addresses 1 .. BLOCKS x PER_BLOCK and the tip phase the next PER_BLOCK: all of them must be watched
// (paying past the watch set is what printed NaN at 10,000 addresses). Fewer catch-up blocks when the set is small.
const BLOCKS = Math.min(Number(values.blocks), Math.floor(ADDRESSES / PER_BLOCK) - 1);
if (BLOCKS < 1) throw new Error(`--addresses must be at least twice --per-block (${ADDRESSES} < 2 x ${PER_BLOCK})`);
if (BLOCKS < Number(values.blocks)) console.log(`catch-up blocks reduced to ${BLOCKS} so that every paid address is watched`);
const ADMIN = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const CONFIRMATIONS = 3;

const dbName = `bench_evm_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: ADMIN });
await admin.connect();
await admin.query(`create database ${dbName}`);
const url = new URL(ADMIN);
url.pathname = `/${dbName}`;
const db = createDb(url.toString(), 10);
const node = await startAnvil({ chainId: 1, extraArgs: ['--gas-limit', '2000000000', '--no-mining'] });
const addr = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;
try {
  await migrateToLatest(db);
  await node.rpc('evm_setAutomine', [true]);
  const [usdt] = await deployTokens(node, [{ symbol: 'USDT', shape: 'fiat', decimals: 6 }]);
  const payer = walletAt(1, node.provider);
  await fund(usdt!, payer.address, parseUnits('100000000', 6));
  const batcher = await deployBatcher(walletAt(0, node.provider));
  const approve = new Contract(usdt!.address, ['function approve(address,uint256) returns (bool)'], payer);
  await (
    await (approve.getFunction('approve') as (a: string, b: bigint) => Promise<{ wait(): Promise<unknown> }>)(
      await batcher.getAddress(),
      parseUnits('100000000', 6),
    )
  ).wait();

  // 100,000 open sessions, each with its deposit address on ethereum:test; every one owes 1.00 USDT.
  await db.insertInto('merchants').values({ id: 'mch_bench', name: 'bench', webhook_url: null, webhook_secret_enc: 'x' }).execute();
  await sql`insert into payment_sessions (id, merchant_id, mode, order_id, amount_minor, currency, target_currency, target_amount_minor,
              hd_account, network, token, deposit_address, expires_at)
            select 'cs_b' || i, 'mch_bench', 'test', 'o' || i, 100, 'USDT', 'USDT', 100, 1, 'ethereum', 'USDT',
                   '0x' || lpad(to_hex(i), 40, '0'), now() + interval '1 day'
            from generate_series(1, ${ADDRESSES}) i`.execute(db);
  await sql`insert into deposit_addresses (network, mode, address, session_id)
            select 'ethereum', 'test', '0x' || lpad(to_hex(i), 40, '0'), 'cs_b' || i from generate_series(1, ${ADDRESSES}) i`.execute(db);

  const adapter = makeAdapter(node, [usdt!], { confirmation: { kind: 'depth', confirmations: CONFIRMATIONS }, maxBlockRange: 50 });
  let watcher = new NetworkWatcher({ db, adapter, pollIntervalMs: 1000, startHeight: BigInt(await node.provider.getBlockNumber()) });
  await watcher.step();

  await node.rpc('evm_setAutomine', [false]);
  const pay = batcher.connect(payer) as Contract;
  const payBlock = async (first: number) => {
    const to = Array.from({ length: PER_BLOCK }, (_, j) => addr(first + j));
    const tx = await (pay.getFunction('pay') as (t: string, a: string[], b: bigint[], o: object) => Promise<{ hash: string }>)(
      usdt!.address,
      to,
      to.map(() => 1_000_000n),
      { gasLimit: 60_000_000n * BigInt(Math.ceil(PER_BLOCK / 1000)) },
    );
    await node.mine(1);
    return tx.hash;
  };

  // Phase 0 (issue 16): the same catch-up without the journal, on other addresses, for the comparison below.
  const counts = async () =>
    (
      await sql<{ paid: string; entries: string; legs: string }>`
        select (select count(*) from payment_sessions where status = 'paid')::text as paid,
               (select count(*) from journal_entries)::text as entries, (select count(*) from journal_legs)::text as legs`.execute(db)
    ).rows[0]!;
  // A watcher without the journal catches up over BLOCKS blocks paying other addresses; run before and after phase 1,
  // so that neither warm-up nor a growing database favours one side.
  const plainPass = async (first: number) => {
    await sql`delete from chain_cursors`.execute(db);
    const plain = new NetworkWatcher({
      db,
      adapter,
      pollIntervalMs: 1000,
      startHeight: BigInt(await node.provider.getBlockNumber()),
      journal: false,
    });
    await plain.step();
    for (let b = 0; b < BLOCKS; b++) await payBlock(first + b * PER_BLOCK);
    await node.mine(CONFIRMATIONS);
    const p0 = await counts();
    const tp0 = performance.now();
    while (!(await plain.step()).caughtUp) {}
    const s = (performance.now() - tp0) / 1000;
    return { paid: Number((await counts()).paid) - Number(p0.paid), seconds: s };
  };
  const before = await plainPass(1 + (BLOCKS + 1) * PER_BLOCK);
  // Back to the journaled watcher, from the current head.
  await sql`delete from chain_cursors`.execute(db);
  const journaled = new NetworkWatcher({ db, adapter, pollIntervalMs: 1000, startHeight: BigInt(await node.provider.getBlockNumber()) });
  await journaled.step();
  watcher = journaled;

  // Phase 1: catch-up throughput over BLOCKS blocks of PER_BLOCK transfers each.
  const j0 = await counts();
  for (let b = 0; b < BLOCKS; b++) await payBlock(1 + b * PER_BLOCK);
  await node.mine(CONFIRMATIONS);
  const rpcBefore = adapter.rpc.totalCalls;
  const headBefore = (
    await db.selectFrom('payment_sessions').select(sql<bigint>`count(*)`.as('n')).where('status', '=', 'paid').executeTakeFirstOrThrow()
  ).n;
  const t0 = performance.now();
  let blocksScanned = 0;
  for (;;) {
    const r = await watcher.step();
    if (r.caughtUp) break;
  }
  const t1 = performance.now();
  const tip = await node.provider.getBlockNumber();
  blocksScanned = BLOCKS + CONFIRMATIONS;
  const paid1 =
    (await db.selectFrom('payment_sessions').select(sql<bigint>`count(*)`.as('n')).where('status', '=', 'paid').executeTakeFirstOrThrow())
      .n - headBefore;
  const seconds = (t1 - t0) / 1000;
  const j1 = await counts();
  const after = await plainPass(1 + (2 * BLOCKS + 1) * PER_BLOCK);
  const plainPaid = before.paid + after.paid;
  const plainSeconds = before.seconds + after.seconds;
  // Phase 2 runs the journaled watcher again, from the current head.
  await sql`delete from chain_cursors`.execute(db);
  watcher = new NetworkWatcher({ db, adapter, pollIntervalMs: 1000, startHeight: BigInt(await node.provider.getBlockNumber()) });
  await watcher.step();

  // Phase 2: at the tip with a 1 s poll: time from the confirming block to paid.
  const stop = new AbortController();
  const running = watcher.run(stop.signal);
  const firstTip = 1 + BLOCKS * PER_BLOCK;
  await payBlock(firstTip);
  await new Promise((r) => setTimeout(r, 1000));
  await node.mine(CONFIRMATIONS - 2);
  await new Promise((r) => setTimeout(r, 1000));
  await node.mine(1); // this block gives the payment its CONFIRMATIONS-th confirmation
  const confirmedAt = performance.now();
  let latencyMs = Number.NaN;
  for (;;) {
    const r = await sql<{
      n: bigint;
    }>`select count(*)::bigint as n from payment_sessions where status = 'paid' and id = ${`cs_b${firstTip + PER_BLOCK - 1}`}`.execute(db);
    if (r.rows[0]!.n === 1n) {
      latencyMs = performance.now() - confirmedAt;
      break;
    }
    if (performance.now() - confirmedAt > 30_000) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  stop.abort();
  await running;

  const rssMb = process.memoryUsage().rss / 2 ** 20;
  console.log(
    `EVM watcher benchmark: ${ADDRESSES} watched addresses, ${BLOCKS} blocks x ${PER_BLOCK} transfers, ${CONFIRMATIONS} confirmations`,
  );
  console.log(
    `  RPC calls per block (catch-up)   ${((adapter.rpc.totalCalls - rpcBefore) / blocksScanned).toFixed(2)}  (by method: ${JSON.stringify(Object.fromEntries(adapter.rpc.calls))})`,
  );
  console.log(`  blocks per second (catch-up)     ${(blocksScanned / seconds).toFixed(1)}`);
  console.log(
    `  deposits credited per second     ${(Number(paid1) / seconds).toFixed(0)}  (${paid1} sessions paid in ${seconds.toFixed(2)} s; target >= 2000)`,
  );
  const latencyText = Number.isFinite(latencyMs) ? `${latencyMs.toFixed(0)} ms` : 'not paid within 30 s';
  console.log(`  confirming block -> paid         ${latencyText} at a 1 s poll (target <= 1000 ms)`);
  const withJournal = Number(paid1) / seconds;
  const withoutJournal = plainPaid / plainSeconds;
  console.log(
    `  journal rows written per second  ${((Number(j1.entries) - Number(j0.entries) + Number(j1.legs) - Number(j0.legs)) / seconds).toFixed(0)}  (${Number(j1.entries) - Number(j0.entries)} entries + ${Number(j1.legs) - Number(j0.legs)} legs in ${seconds.toFixed(2)} s)`,
  );
  console.log(
    `  deposits credited per second     with journal ${withJournal.toFixed(0)}, without ${withoutJournal.toFixed(0)} (${before.paid} in ${before.seconds.toFixed(2)} s before, ${after.paid} in ${after.seconds.toFixed(2)} s after): ${(((withoutJournal - withJournal) / withoutJournal) * 100).toFixed(1)}% slower with (issue 16 target <= 10%)`,
  );
  console.log(`  watcher process RSS              ${rssMb.toFixed(0)} MB (includes Anvil client and test helpers; target < 300 MB)`);
  console.log(`  chain tip ${tip}; watch set size ${watcher.watch.size}`);
  const perSecond = Number(paid1) / seconds;
  const rpcPerBlock = (adapter.rpc.totalCalls - rpcBefore) / blocksScanned;
  if (process.env.BENCH_OUT)
    writeFileSync(
      process.env.BENCH_OUT,
      JSON.stringify({
        figures: `${ADDRESSES.toLocaleString('en')} addresses, ${PER_BLOCK} transfers/block: ${rpcPerBlock.toFixed(1)} RPC calls per block; ${perSecond.toFixed(0)} deposits credited/s; confirming block → paid ${latencyText} at a 1 s poll; RSS ${rssMb.toFixed(0)} MB (benchmark process)`,
        target: '≥ 2,000/s; ≤ 1,000 ms; < 300 MB',
        met: perSecond >= 2000 && latencyMs <= 1000 && rssMb < 300,
        addresses: ADDRESSES,
        deposits_per_second: Math.round(perSecond),
        confirm_to_paid_ms: Number.isFinite(latencyMs) ? Math.round(latencyMs) : null,
        rss_mb: Math.round(rssMb),
        rpc_calls_per_block: Number(rpcPerBlock.toFixed(2)),
      }),
    );
} finally {
  await node.stop();
  await db.destroy();
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
