// Reconcile benchmark (issue 16). Prints figures; never fails on a timing.
//   npx tsx scripts/bench/reconcile.ts [--addresses 100000]
// Local only: a fresh Postgres database on 127.0.0.1 (dropped at the end) and an Anvil node on a random port.
// N synthetic addresses (0x00..0i) each receive 1.00 USDT on chain (1,000 per transaction through the batch payer) and
// hold the matching journal entry (written in bulk by SQL: the journal's own writer is measured by evm-watcher.ts).
// Then `reconcile` reads every address's USDT and native balance at the pinned height and compares.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { sql } from 'kysely';
import { createDb } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { reconcileChain } from '../../src/reconcile/reconcile.js';
import { makeAdapter } from '../../test/support/evm-tokens/scenario.js';
import { startPayerChain } from './evm-bench-chain.js';

const { values } = parseArgs({ options: { addresses: { type: 'string', default: '100000' } } });
const N = Number(values.addresses);
const PER_TX = 1000;
const ADMIN = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const dbName = `bench_rec_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: ADMIN });
await admin.connect();
await admin.query(`create database ${dbName}`);
const url = new URL(ADMIN);
url.pathname = `/${dbName}`;
const db = createDb(url.toString(), 10);
const chain = await startPayerChain([{ symbol: 'USDT', decimals: 6 }], []);
const node = chain.node;
const usdt = chain.tokens[0];
const addr = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;
try {
  await migrateToLatest(db);
  const tSetup = performance.now();
  for (let first = 1; first <= N; first += PER_TX) {
    const to = Array.from({ length: Math.min(PER_TX, N - first + 1) }, (_, j) => addr(first + j));
    await (
      await chain.pay(
        usdt!,
        to,
        to.map(() => 1_000_000n),
      )
    ).wait();
  }
  await node.mine(5);
  const height = BigInt(await node.provider.getBlockNumber()) - 3n;
  // One deposit entry per address (external → address, 1.00 USDT), and the watcher's cursor at the final height.
  await sql`
    insert into journal_entries (network, mode, tx_hash, leg_key, kind, block_height)
    select 'ethereum', 'test', '0xbench' || i, 'log:0', 'deposit', 1 from generate_series(1, ${N}) i`.execute(db);
  await sql`
    insert into journal_legs (entry_id, account, asset, amount)
    select e.id, a.account, 'ethereum:test:USDT', a.amount
    from journal_entries e
    cross join lateral (values ('external', -1000000), ('address:ethereum:test:0x' || lpad(to_hex(substr(e.tx_hash, 8)::int), 40, '0'), 1000000))
         as a(account, amount)`.execute(db);
  await sql`insert into chain_cursors (chain_key, cursor, tip_height, tip_time, final_height)
            values ('ethereum:test', '{}', ${height.toString()}, now(), ${height.toString()})`.execute(db);
  const setupSeconds = (performance.now() - tSetup) / 1000;

  const adapter = makeAdapter(node, [usdt!], { confirmation: { kind: 'depth', confirmations: 3 } });
  const t0 = performance.now();
  const r = await reconcileChain(db, adapter);
  const seconds = (performance.now() - t0) / 1000;
  const per10k = (x: number) => (x * 10_000) / Math.max(1, r.addresses);
  console.log(`Reconcile benchmark: ${N} addresses with journal activity on Anvil (setup ${setupSeconds.toFixed(1)} s)`);
  console.log(`  pinned height                    ${r.height}`);
  console.log(`  balances read                    ${r.balances} (USDT and native per address)`);
  console.log(
    `  RPC requests                     ${r.rpcCalls} (JSON-RPC batches of 500 calls), ${per10k(r.rpcCalls).toFixed(1)} per 10,000 addresses`,
  );
  console.log(`  wall time                        ${seconds.toFixed(2)} s, ${per10k(seconds).toFixed(2)} s per 10,000 addresses`);
  console.log(
    `  differences                      ${r.differences.filter((d) => d.failing).length} token, ${r.differences.filter((d) => !d.failing).length} native (expected 0 and 0)`,
  );
  console.log(`  process RSS                      ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB`);
  const failing = r.differences.filter((d) => d.failing).length;
  if (process.env.BENCH_OUT)
    writeFileSync(
      process.env.BENCH_OUT,
      JSON.stringify({
        figures: `${r.addresses.toLocaleString('en')} addresses, USDT and native at the pinned height: ${per10k(r.rpcCalls).toFixed(1)} RPC requests and ${per10k(seconds).toFixed(2)} s per 10,000 addresses (${r.rpcCalls} requests, ${seconds.toFixed(1)} s in all); ${r.differences.length} differences`,
        target: 'batched reads (issue 16); 0 differences',
        met: r.differences.length === 0 && failing === 0,
        rpc_per_10k: Number(per10k(r.rpcCalls).toFixed(1)),
        seconds_per_10k: Number(per10k(seconds).toFixed(2)),
      }),
    );
} finally {
  await node.stop();
  await db.destroy();
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
