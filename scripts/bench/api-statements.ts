import { plainSession } from '../../test/support/new-session.js';
import { readFileSync } from 'node:fs';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { createDb } from '../../src/db/database.js';
import type { Database } from '../../src/db/schema.js';
import { ensureDatabase } from '../../src/db/ensure-database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { findSessionReceived } from '../../src/ledger/payments/session-payments.js';
import { insertSession } from '../../src/ledger/payments/sessions.js';
import { SecretBox } from '../../src/security/secret-box.js';

// The API's two hot statements, old shape against new, alternated in one run: CPU per statement of this process and of
// its Postgres backend (/proc/<pid>/stat, so Postgres on this host), sequential on one connection. CPU per statement
// moves far less than a rate when other work shares the machine. old = as before docs/performance.md "Named statements":
// Kysely compiled per call, `*`, unnamed; new = src/ledger (compiled once for the read, explicit columns, named).
// Usage: npx tsx scripts/bench/api-statements.ts [unix|tcp] [rounds 4] [statements per measure 3000]. Not a CI gate.
const transport = process.argv[2] ?? 'unix';
const base = 'postgres://postgres@127.0.0.1:5432/stablepay_stmt_wapi';
const url = transport === 'unix' ? `${base}?host=/var/run/postgresql` : base;
await ensureDatabase(url);
const admin = createDb(url, 2);
await migrateToLatest(admin);
const m = await createMerchant(admin, new SecretBox('42'.repeat(32)), { name: 'stmt' });
const tick = 100; // USER_HZ, the unit of /proc/<pid>/stat's utime and stime
const backendCpu = async (db: Kysely<Database>) => {
  const pid = (await sql<{ p: number }>`select pg_backend_pid() as p`.execute(db)).rows[0]!.p;
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(f[11]) + Number(f[12])) / tick) * 1e6; // µs
};
let n = 0;
const session = (id: string) =>
  plainSession({
    id,
    merchantId: m.merchantId,
    orderId: `o-${id}`,
    amountMinor: 1999n,
    quotes: { USDT: { amountMinor: 1999n, exchangeRate: null }, USDC: { amountMinor: 1999n, exchangeRate: null } },
  });
const first = `cs_stmt_first_${process.pid}`;
await insertSession(admin, session(first));
// The old shapes (HEAD before this change): Kysely compiled per call, `*`, unnamed.
const oldGet = (db: Kysely<Database>, id: string) =>
  db
    .selectFrom('payment_sessions as s')
    .leftJoin('deposits as d', (j) =>
      j
        .onRef('d.session_id', '=', 's.id')
        .on('d.status', '=', 'confirmed')
        .on('d.unmatched_reason', 'is distinct from', 'unsupported_token'),
    )
    .selectAll('s')
    .select([
      'd.id as received_id',
      'd.network as received_network',
      'd.token as received_token',
      'd.tx_hash as received_tx_hash',
      'd.amount_base as received_amount_base',
      'd.from_address as received_from',
      'd.confirmed_at as received_confirmed_at',
      'd.disposition as received_disposition',
      'd.unmatched_reason as received_unmatched_reason',
    ])
    .where('s.id', '=', id)
    .orderBy('d.block_number')
    .orderBy('d.log_index')
    .execute()
    .then((rows) => Object.fromEntries(Object.entries(rows[0]!).filter(([k]) => !k.startsWith('received_'))));
async function measure(kind: 'old' | 'new', op: 'get' | 'insert', count: number) {
  const db = createDb(url, 1, { namedStatements: kind === 'new' });
  await sql`select 1`.execute(db);
  const b0 = await backendCpu(db);
  const c0 = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    if (op === 'get') await (kind === 'new' ? findSessionReceived(db, first) : oldGet(db, first));
    else {
      const id = `cs_${process.pid}_${n++}`;
      if (kind === 'new') await insertSession(db, session(id));
      else
        await db
          .insertInto('payment_sessions')
          .values({
            id,
            merchant_id: m.merchantId,
            mode: 'test',
            order_id: `o-${id}`,
            amount_minor: 1999n,
            currency: 'USD',
            description: null,
            merchant_domain_id: null,
            line_items: null,
            tax_minor: null,
            shipping_minor: null,
            success_url: null,
            cancel_url: null,
            metadata: '{}',
            target_currency: 'USDT',
            target_amount_minor: 1999n,
            exchange_rate: null,
            rate_locked_at: null,
            network: null,
            token: null,
            quote_usdt_minor: 1999n,
            quote_usdt_rate: null,
            quote_usdc_minor: 1999n,
            quote_usdc_rate: null,
            hd_account: sql<number>`(select account_index from merchant_hd_accounts where merchant_id = ${m.merchantId} and mode = ${'test'})`,
            expires_at: sql<Date>`now() + (select coalesce(session_lifetime_seconds, ${1800}::integer) from merchants where id = ${m.merchantId}) * interval '1 second'`,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
    }
  }
  const c = process.cpuUsage(c0);
  const b1 = await backendCpu(db);
  await db.destroy();
  return { client: (c.user + c.system) / count, server: (b1 - b0) / count };
}
const rounds = Number(process.argv[3] ?? 4);
const count = Number(process.argv[4] ?? 3000);
const res: Record<string, { client: number[]; server: number[] }> = {};
for (let r = 0; r < rounds; r++)
  for (const op of ['get', 'insert'] as const)
    for (const kind of (r % 2 ? ['new', 'old'] : ['old', 'new']) as ('old' | 'new')[]) {
      const x = await measure(kind, op, count);
      const k = `${op} ${kind}`;
      res[k] ??= { client: [], server: [] };
      res[k].client.push(x.client);
      res[k].server.push(x.server);
    }
const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
console.log(
  `transport ${transport}, ${rounds} rounds × ${count} sequential statements on one connection, load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
);
for (const [k, v] of Object.entries(res))
  console.log(
    k.padEnd(12),
    'client µs/stmt',
    v.client.map((x) => x.toFixed(0)).join(' '),
    '(median',
    med(v.client).toFixed(0) + ')',
    '| backend µs/stmt',
    v.server.map((x) => x.toFixed(0)).join(' '),
    '(median',
    med(v.server).toFixed(0) + ')',
  );
await admin.destroy();
const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
await c.connect();
await c.query('drop database if exists stablepay_stmt_wapi with (force)');
await c.end();
