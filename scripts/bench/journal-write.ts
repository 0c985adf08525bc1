// Journal write cost on the watcher's deposit path (issue 16, docs/performance.md "Journal cost"). Prints figures;
// never fails on a timing.
//   npx tsx scripts/bench/journal-write.ts [--addresses 100000] [--batches 20] [--per-batch 1000]
// Records batches of observed deposits (recordObservedDepositRows, one database transaction per batch, as a watcher
// step does) alternately with and without the journal, on fresh addresses of open sessions, and prints the median time
// of each and their difference: what the journal adds per batch, without Anvil or the credit step around it, so that
// the figure moves less with the machine's load than the watcher benchmark's ratio. Batches alternate which side runs
// first. It also reads the CPU time the Postgres backend spent (utime + stime from /proc/<pid>/stat, 10 ms ticks) on
// each side: on a loaded machine wall time mostly measures the wait for a core, CPU time the work. BENCH_EXPLAIN=1 also prints the plan (EXPLAIN ANALYZE, BUFFERS, triggers; through auto_explain) of each
// journal statement of one more batch, rolled back.
// Local only: a fresh Postgres database on 127.0.0.1, dropped at the end.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { recordObservedDepositRows } from '../../src/ledger/payments/deposits.js';
import type { ObservedDeposit } from '../../src/ledger/core/observed-deposit.js';
import '../../src/db/database.js'; // bigint type parsers

const { values } = parseArgs({
  options: {
    addresses: { type: 'string', default: '100000' },
    batches: { type: 'string', default: '20' },
    'per-batch': { type: 'string', default: '1000' },
  },
});
const ADDRESSES = Number(values.addresses);
const PER_BATCH = Number(values['per-batch']);
const BATCHES = Math.min(Number(values.batches), Math.floor(ADDRESSES / PER_BATCH / 2) - (process.env.BENCH_EXPLAIN ? 1 : 0));
if (BATCHES < 1) throw new Error(`--addresses must be at least 2 x --per-batch (+1 batch with BENCH_EXPLAIN)`);
const ADMIN = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const chain = { network: 'ethereum', mode: 'test' as const };

const dbName = `bench_jw_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: ADMIN });
await admin.connect();
await admin.query(`create database ${dbName}`);
const url = new URL(ADMIN);
url.pathname = `/${dbName}`;
const notices: string[] = [];
const pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
// The database is dropped with (force) at the end: a connection it ends must not crash the process.
pool.on('error', () => {});
pool.on('connect', (c) => {
  c.on('error', () => {});
  c.on('notice', (n) => notices.push(n.message ?? ''));
});
const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
const addr = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return (s[Math.floor((s.length - 1) / 2)]! + s[Math.ceil((s.length - 1) / 2)]!) / 2;
};
try {
  await migrateToLatest(db);
  await db.insertInto('merchants').values({ id: 'mch_bench', name: 'bench', webhook_url: null, webhook_secret_enc: 'x' }).execute();
  await sql`insert into payment_sessions (id, merchant_id, mode, order_id, amount_minor, currency, target_currency, target_amount_minor,
              hd_account, network, token, deposit_address, expires_at)
            select 'cs_b' || i, 'mch_bench', 'test', 'o' || i, 100, 'USDT', 'USDT', 100, 1, 'ethereum', 'USDT',
                   '0x' || lpad(to_hex(i), 40, '0'), now() + interval '1 day'
            from generate_series(1, ${ADDRESSES}) i`.execute(db);
  await sql`insert into deposit_addresses (network, mode, address, session_id)
            select 'ethereum', 'test', '0x' || lpad(to_hex(i), 40, '0'), 'cs_b' || i from generate_series(1, ${ADDRESSES}) i`.execute(db);
  await sql`analyze`.execute(db);

  // One batch: PER_BATCH transfers of one transaction (as the benchmark's batch payment), to fresh addresses.
  const batch = (n: number): ObservedDeposit[] => {
    const txHash = `0x${randomBytes(32).toString('hex')}`;
    const blockHash = `0x${randomBytes(32).toString('hex')}`;
    return Array.from({ length: PER_BATCH }, (_, j) => ({
      txHash,
      logIndex: j,
      blockHeight: BigInt(100 + n),
      blockHash,
      blockTime: new Date(),
      token: 'USDT',
      tokenContract: '0x00000000000000000000000000000000000000aa',
      from: '0x00000000000000000000000000000000000000bb',
      to: addr(1 + n * PER_BATCH + j),
      amount: 1_000_000n,
    }));
  };
  // The pool holds one connection: every batch runs on this backend.
  const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid;
  const cpuTicks = () => {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(f[11]) + Number(f[12]); // utime, stime (fields 14 and 15)
  };
  const cpu = { with: 0, without: 0 };
  const nodeCpu = { with: 0, without: 0 }; // this process (building the statements), µs
  const run = async (n: number, journal: boolean) => {
    const items = batch(n);
    const c = cpuTicks();
    const u = process.cpuUsage();
    const t = performance.now();
    const rows = await db.transaction().execute((trx) => recordObservedDepositRows(trx, chain, items, { journal }));
    const ms = performance.now() - t;
    cpu[journal ? 'with' : 'without'] += cpuTicks() - c;
    const du = process.cpuUsage(u);
    nodeCpu[journal ? 'with' : 'without'] += du.user + du.system;
    if (rows.length !== PER_BATCH) throw new Error(`batch ${n}: ${rows.length} deposits recorded, not ${PER_BATCH}`);
    return ms;
  };
  const withJ: number[] = [];
  const without: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    // Alternate which side goes first, so that neither a warm cache nor a growing table favours one.
    if (b % 2 === 0) {
      withJ.push(await run(2 * b, true));
      without.push(await run(2 * b + 1, false));
    } else {
      without.push(await run(2 * b, false));
      withJ.push(await run(2 * b + 1, true));
    }
  }
  const counts = (
    await sql<{ e: string; l: string }>`
    select (select count(*) from journal_entries)::text as e, (select count(*) from journal_legs)::text as l`.execute(db)
  ).rows[0]!;
  const size = (
    await sql<{ t: string; n: string }>`
    select c.relname as t, pg_size_pretty(pg_total_relation_size(c.oid)) as n from pg_class c
    where c.relname in ('journal_entries', 'journal_legs', 'deposits') order by 1`.execute(db)
  ).rows;
  console.log(`Journal write cost: ${BATCHES} batches of ${PER_BATCH} deposits each way, ${ADDRESSES} sessions`);
  console.log(`  deposits recorded, with journal     median ${median(withJ).toFixed(1)} ms per batch`);
  console.log(`  deposits recorded, without journal  median ${median(without).toFixed(1)} ms per batch`);
  console.log(
    `  journal cost                        ${(median(withJ) - median(without)).toFixed(1)} ms per batch of ${PER_BATCH} (${counts.e} entries, ${counts.l} legs written)`,
  );
  const tick = 1000 / 100; // ms per clock tick (USER_HZ)
  console.log(
    `  Postgres backend CPU                with journal ${((cpu.with * tick) / BATCHES).toFixed(1)} ms per batch, without ${((cpu.without * tick) / BATCHES).toFixed(1)} ms: the journal ${(((cpu.with - cpu.without) * tick) / BATCHES).toFixed(1)} ms per batch`,
  );
  console.log(
    `  this process's CPU                  with journal ${(nodeCpu.with / 1000 / BATCHES).toFixed(1)} ms per batch, without ${(nodeCpu.without / 1000 / BATCHES).toFixed(1)} ms: the journal ${((nodeCpu.with - nodeCpu.without) / 1000 / BATCHES).toFixed(1)} ms per batch`,
  );
  console.log(`  table sizes                         ${size.map((r) => `${r.t} ${r.n}`).join(', ')}`);

  if (process.env.BENCH_EXPLAIN) {
    const items = batch(2 * BATCHES);
    await db
      .transaction()
      .execute(async (trx) => {
        await sql`load 'auto_explain'`.execute(trx);
        for (const s of [
          'auto_explain.log_min_duration = 0',
          'auto_explain.log_analyze = on',
          'auto_explain.log_buffers = on',
          'auto_explain.log_triggers = on',
          'auto_explain.log_nested_statements = on',
          'auto_explain.log_level = notice',
        ])
          await sql.raw(`set local ${s}`).execute(trx);
        await recordObservedDepositRows(trx, chain, items, { journal: true });
        await sql`set local auto_explain.log_min_duration = -1`.execute(trx);
        throw new Error('rollback');
      })
      .catch((e: Error) => {
        if (e.message !== 'rollback') throw e;
      });
    for (const n of notices) console.log(n.replace(/\$\d+/g, '?').replace(/\{[^}]{200,}\}/g, '{…}'));
  }
} finally {
  await db.destroy();
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
