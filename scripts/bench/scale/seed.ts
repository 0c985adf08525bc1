// The scale benchmark's seeder (issue 38, "A realistic database"): a year of a large deployment in a fresh database.
//   npx tsx scripts/bench/scale/seed.ts [--factor 0.01] [--keep]
// --factor 1.0 is the size: 1,000 merchants, 1,000,000 sessions over a simulated year on all eight networks
// of the registry (test and live), 1,000,000 deposits, 100,000 refunds, 10,000 subscriptions with 12 invoices and
// charges each, 3,000,000 webhook delivery attempts, and the journal to match. Merchants are created by the service's
// own createMerchant (keys, HD accounts); everything else by set-based INSERT ... SELECT generate_series statements
// (seed-sql.ts, seed-sql-subscriptions.ts) writing the rows the service writes, with the database's own triggers on
// (the journal's balance check, the overview's deltas). Prints the seeding time and each table's size; then checks
// (check.ts): every journal entry balances per asset, and the signed API answers GET for a seeded session.
// Without --keep the database is dropped at the end. Local only (127.0.0.1).
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import { createDb, type Db } from '../../../src/db/database.js';
import { migrateToLatest } from '../../../src/db/migrate.js';
import { createMerchant } from '../../../src/ledger/merchants/merchants.js';
import { SecretBox } from '../../../src/security/secret-box.js';
import { checkSeeded } from './check.js';
import { OPENING_BALANCES_SQL, sessionRangeSql, setupSql } from './seed-sql.js';
import { ATTEMPTS_SQL, DELIVERIES_SQL, SUBSCRIPTION_SQL } from './seed-sql-subscriptions.js';
import { scaleSizes, type ScaleSizes } from './sizes.js';

export const ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const SCALE_BOX_KEY = '42'.repeat(32);
const SESSION_CHUNK = 50_000;
const SUBSCRIPTION_CHUNK = 2_000;
const EVENT_CHUNK = 100_000;

export interface SeededDatabase {
  name: string;
  url: string;
  db: Db;
  sizes: ScaleSizes;
  seconds: number;
  /** The merchant with the most sessions (merchant 0 of the skew), with its test key. */
  largest: { merchantId: string; key: string; secret: string };
  drop(): Promise<void>;
}

export async function freshDatabase(prefix: string): Promise<{ name: string; url: string; db: Db; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  await adminQuery(`create database ${name}`);
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  const db = createDb(u.toString(), 10);
  await migrateToLatest(db);
  return {
    name,
    url: u.toString(),
    db,
    async drop() {
      await db.destroy();
      await adminQuery(`drop database if exists ${name} with (force)`);
    },
  };
}

async function adminQuery(text: string): Promise<void> {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

/** Seeds a fresh database (named `<prefix>_<random>`) at `factor`; `log` gets one line per step. */
export async function seedScale(
  factor: number,
  log: (line: string) => void = console.log,
  prefix = 'bench_scale',
): Promise<SeededDatabase> {
  const sizes = scaleSizes(factor);
  const fresh = await freshDatabase(prefix);
  const t0 = performance.now();
  const step = async (label: string, run: () => Promise<unknown>) => {
    const t = performance.now();
    await run();
    log(`  ${label.padEnd(40)} ${((performance.now() - t) / 1000).toFixed(1)} s`);
  };
  try {
    const box = new SecretBox(SCALE_BOX_KEY);
    const merchants: { id: string; key: string; secret: string }[] = [];
    await step(`merchants (${sizes.merchants}, createMerchant)`, async () => {
      for (let i = 0; i < sizes.merchants; i++) {
        const m = await createMerchant(fresh.db, box, { name: `Scale shop ${i}`, webhookUrl: `https://shop${i}.example/hooks` });
        merchants.push({ id: m.merchantId, key: m.testKey.key, secret: m.testKey.secret });
      }
    });
    const client = new pg.Client({ connectionString: fresh.url });
    await client.connect();
    try {
      await client.query(setupSql(sizes.merchants, sizes.sessions));
      await client.query(
        `insert into mch (idx, id, url, hd_test, hd_live)
         select v.idx, m.id, m.webhook_url, t.account_index, l.account_index
         from unnest($1::text[]) with ordinality as v(id, idx)
         join merchants m on m.id = v.id
         join merchant_hd_accounts t on t.merchant_id = m.id and t.mode = 'test'
         join merchant_hd_accounts l on l.merchant_id = m.id and l.mode = 'live'`,
        [merchants.map((m) => m.id)],
      );
      await client.query('update mch set idx = idx - 1');
      for (let lo = 1; lo <= sizes.sessions; lo += SESSION_CHUNK) {
        const hi = Math.min(sizes.sessions, lo + SESSION_CHUNK - 1);
        await step(`sessions ${lo}..${hi} and their rows`, async () => {
          for (const s of sessionRangeSql(lo, hi)) await client.query(s.text);
        });
      }
      for (let lo = 1; lo <= sizes.subscriptions; lo += SUBSCRIPTION_CHUNK) {
        const hi = Math.min(sizes.subscriptions, lo + SUBSCRIPTION_CHUNK - 1);
        await step(`subscriptions ${lo}..${hi} and their rows`, async () => {
          for (const s of SUBSCRIPTION_SQL) await client.query(s.text, [lo, hi]);
        });
      }
      await step('hot wallets: opening balances', () => client.query(OPENING_BALANCES_SQL));
      const { rows } = await client.query<{ lo: string; hi: string; n: string }>(
        'select min(seq)::text as lo, max(seq)::text as hi, count(*)::text as n from outbox_events',
      );
      const [lo, hi, events] = [BigInt(rows[0]!.lo), BigInt(rows[0]!.hi), BigInt(rows[0]!.n)];
      const attempts = BigInt(Math.max(sizes.webhookAttempts, Number(events)));
      const per = attempts / events;
      const extra = attempts % events;
      for (let a = lo; a <= hi; a += BigInt(EVENT_CHUNK)) {
        const b = a + BigInt(EVENT_CHUNK) - 1n < hi ? a + BigInt(EVENT_CHUNK) - 1n : hi;
        await step(`webhook deliveries and attempts, events ${a - lo + 1n}..${b - lo + 1n}`, async () => {
          await client.query(DELIVERIES_SQL, [a.toString(), b.toString(), per.toString(), extra.toString(), lo.toString()]);
          await client.query(ATTEMPTS_SQL, [a.toString(), b.toString()]);
        });
      }
      await step('vacuum analyze', () => client.query('vacuum analyze'));
    } finally {
      await client.end();
    }
    const seconds = (performance.now() - t0) / 1000;
    return { ...fresh, sizes, seconds, largest: { merchantId: merchants[0]!.id, key: merchants[0]!.key, secret: merchants[0]!.secret } };
  } catch (err) {
    await fresh.drop();
    throw err;
  }
}

/** Rows and pg_total_relation_size (heap, indexes, TOAST) of every table that holds rows, largest first. */
export async function tableSizes(db: Db): Promise<{ table: string; rows: number; bytes: number }[]> {
  const { rows } = await sql<{ table: string; rows: string; bytes: string }>`
    select c.relname as table, greatest(c.reltuples, 0)::bigint::text as rows, pg_total_relation_size(c.oid)::text as bytes
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind = 'r' and c.relname not like 'kysely_%' and c.reltuples > 0
    order by pg_total_relation_size(c.oid) desc`.execute(db);
  return rows.map((r) => ({ table: r.table, rows: Number(r.rows), bytes: Number(r.bytes) }));
}

export function printSizes(sizes: { table: string; rows: number; bytes: number }[], log: (l: string) => void = console.log): void {
  const mb = (b: number) => (b / 2 ** 20).toFixed(1);
  log('| table | rows | MB (heap + indexes + TOAST) |');
  log('|---|---:|---:|');
  for (const s of sizes) log(`| ${s.table} | ${s.rows} | ${mb(s.bytes)} |`);
  log(`| all | ${sizes.reduce((a, s) => a + s.rows, 0)} | ${mb(sizes.reduce((a, s) => a + s.bytes, 0))} |`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { factor: { type: 'string', default: '0.01' }, keep: { type: 'boolean', default: false } } });
  const seeded = await seedScale(Number(values.factor));
  try {
    console.log(`\nseeded factor ${seeded.sizes.factor} in ${seeded.seconds.toFixed(1)} s (database ${seeded.name})\n`);
    printSizes(await tableSizes(seeded.db));
    const check = await checkSeeded(seeded);
    console.log(`\ncheck: ${JSON.stringify(check)}`);
  } finally {
    if (values.keep) await seeded.db.destroy();
    else await seeded.drop();
  }
}
