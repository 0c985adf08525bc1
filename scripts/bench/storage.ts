// Storage per session and per payment, and a merchant's growth per year (issue 38, docs/performance.md "Storage").
//   npx tsx scripts/bench/storage.ts [--sessions 4000] [--paid-percent 65] [--per-day 10000]
// Writes N sessions through the service's own code on a fresh database: each created through the real API (signed
// request with an Idempotency-Key: the session row, its locked quotes, the stored answer), a network chosen (the deposit
// address row), and for the paid share a transfer seen and confirmed as the watcher does it (deposit, journal entry and
// legs, settlement, overview rows, payment.completed in the outbox), relayed by the real outbox relay (the delivery
// row with its frozen body) and delivered once (the attempt log row, as the delivery worker writes it). Then reads
// pg_total_relation_size (heap, indexes, TOAST) of every table, divides by the sessions and by the payments, and
// projects a year at --per-day sessions a day with and without the default retention (docs/retention.md).
// Local only: a fresh Postgres database on 127.0.0.1, dropped at the end. Prints figures; never fails on a size.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import pg from 'pg';
import { RATE_LIMITS_OFF } from '../../src/api/rate-limit-http.js';
import { buildServer } from '../../src/api/server.js';
import { createDb } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { retentionSettingsFrom, retentionEnvSchema } from '../../src/jobs/retention-settings.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { confirmFinalDeposits, recordObservedDepositRows } from '../../src/ledger/payments/deposits.js';
import { selectSessionNetwork } from '../../src/ledger/payments/network-selection.js';
import { createRateService } from '../../src/rates/index.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { recordAttempts } from '../../src/webhooks/deliveries.js';
import { relayBatch } from '../../src/webhooks/relay.js';

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '4000' },
    'paid-percent': { type: 'string', default: '65' },
    'per-day': { type: 'string', default: '10000' },
  },
});
const N = Number(values.sessions);
const PAID_SHARE = Number(values['paid-percent']) / 100;
const PER_DAY = Number(values['per-day']);
const ADMIN = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const chain = { network: 'ethereum' as const, mode: 'test' as const };

const dbName = `bench_storage_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: ADMIN });
await admin.connect();
await admin.query(`create database ${dbName}`);
const url = new URL(ADMIN);
url.pathname = `/${dbName}`;
const db = createDb(url.toString(), 8);
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 2 });
const box = new SecretBox('42'.repeat(32));

try {
  await migrateToLatest(db);
  const m = await createMerchant(db, box, { name: 'Storage shop', webhookUrl: 'https://shop.example/hooks/stablepay' });
  const app = await buildServer({
    db,
    redis,
    box,
    rates: createRateService({ sources: ['peg'], timeoutMs: 1000, cacheTtlMs: 30_000 }),
    checkoutBaseUrl: 'https://pay.example/pay',
    docsUrl: 'https://pay.example/docs/errors',
    redisPrefix: `sp_bench_storage_${randomBytes(3).toString('hex')}`,
    authWindowSeconds: 300,
    maxBodyBytes: 65_536,
    sessionLifetimeSeconds: 1800,
    logLevel: 'silent',
    rateLimits: RATE_LIMITS_OFF,
  });

  // 1. Sessions through the API, as an integration sends them (a typical body: two line items, two metadata keys).
  const ids: string[] = [];
  const create = async (i: number) => {
    const body = JSON.stringify({
      amount: '49.90',
      currency: 'USD',
      order_id: `order-2026-${String(i).padStart(8, '0')}`,
      description: 'Order at Storage shop',
      success_url: 'https://shop.example/checkout/success?order=1234567',
      cancel_url: 'https://shop.example/checkout/cancel?order=1234567',
      metadata: { customer_id: `cus_${randomBytes(6).toString('hex')}`, cart_id: randomUUID() },
      line_items: [
        { price_data: { currency: 'USD', unit_amount: '39.90', product_data: { name: 'Wireless keyboard' } }, quantity: 1 },
        { price_data: { currency: 'USD', unit_amount: '10.00', product_data: { name: 'Shipping' } }, quantity: 1 },
      ],
    });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const nonce = randomUUID();
    const signature = createHmac('sha256', m.testKey.secret).update(`${timestamp}.${nonce}.${body}`).digest('hex');
    const r = await app.inject({
      method: 'POST',
      url: '/api/v1/checkout/sessions/create',
      payload: body,
      headers: {
        authorization: `Bearer ${m.testKey.key}`,
        'content-type': 'application/json',
        'x-service-timestamp': timestamp,
        'x-service-nonce': nonce,
        'x-service-signature': signature,
        'idempotency-key': randomUUID(),
      },
    });
    if (r.statusCode !== 200) throw new Error(`session create answered ${r.statusCode}: ${r.body}`);
    ids[i] = (r.json() as { id: string }).id;
  };
  const t0 = performance.now();
  for (let i = 0; i < N; i += 16) await Promise.all(Array.from({ length: Math.min(16, N - i) }, (_, k) => create(i + k)));
  const createdMs = performance.now() - t0;

  // 2. The payer picks a network: one deposit address per session.
  const address = (i: number) => `0x${(i + 1).toString(16).padStart(40, '0')}`;
  for (let i = 0; i < N; i++) {
    const r = await selectSessionNetwork(db, ids[i]!, { network: 'ethereum', token: 'USDT', address: address(i) });
    if (r.kind !== 'selected') throw new Error(`select ${ids[i]}: ${r.kind}`);
  }

  // 3. The paid share: one transfer each, seen and confirmed in blocks of 100 (the watcher's step), then relayed and
  //    delivered once (a 200 with a short body, as most receivers answer).
  const paid = Math.round(N * PAID_SHARE);
  const amount = 49_900_000n; // 49.90 USDT, 6 decimals
  for (let i = 0, block = 1000n; i < paid; i += 100, block++) {
    const items = Array.from({ length: Math.min(100, paid - i) }, (_, k) => ({
      txHash: `0x${randomBytes(32).toString('hex')}`,
      logIndex: k,
      blockHeight: block,
      blockHash: `0x${randomBytes(32).toString('hex')}`,
      blockTime: new Date(),
      token: 'USDT',
      tokenContract: '0xdac17f958d2ee523a2206206994597c13d831ec7',
      from: `0x${randomBytes(20).toString('hex')}`,
      to: address(i + k),
      amount,
    }));
    await db.transaction().execute(async (trx) => {
      await recordObservedDepositRows(trx, chain, items);
      await confirmFinalDeposits(trx, chain, block, () => 6);
    });
  }
  const queue = { addBulk: async () => [] } as unknown as Parameters<typeof relayBatch>[1];
  let relayed = 0;
  for (let n = 1; n > 0; relayed += n) n = await relayBatch(db, queue, 500);
  const pending = await db.selectFrom('webhook_deliveries').select(['event_id', 'merchant_id']).where('status', '=', 'pending').execute();
  for (let i = 0; i < pending.length; i += 200)
    await recordAttempts(
      db,
      pending.slice(i, i + 200).map((d) => ({
        eventId: d.event_id,
        merchantId: d.merchant_id,
        generation: 0,
        url: 'https://shop.example/hooks/stablepay',
        statusCode: 200,
        error: null,
        latencyMs: 85,
        excerpt: '{"received":true}',
        outcome: 'delivered' as const,
        attempted: true,
      })),
    );
  await app.close();

  // 4. Sizes, after VACUUM ANALYZE (no dead rows counted; pages as a steady table holds them).
  await sql`vacuum analyze`.execute(db);
  const { rows } = await sql<{ table: string; rows: string; bytes: string }>`
    select c.relname as table, c.reltuples::bigint::text as rows, pg_total_relation_size(c.oid)::text as bytes
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind = 'r' and c.relname not like 'kysely_%'
    order by pg_total_relation_size(c.oid) desc`.execute(db);
  // An empty table still holds its index root pages: subtract each table's size on a fresh database.
  const empty = new Map<string, number>();
  {
    const fresh = `${dbName}_empty`;
    await admin.query(`create database ${fresh}`);
    const u = new URL(ADMIN);
    u.pathname = `/${fresh}`;
    const edb = createDb(u.toString(), 1);
    try {
      await migrateToLatest(edb);
      const e = await sql<{ table: string; bytes: string }>`
        select c.relname as table, pg_total_relation_size(c.oid)::text as bytes from pg_class c
        join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and c.relkind = 'r'`.execute(edb);
      for (const r of e.rows) empty.set(r.table, Number(r.bytes));
    } finally {
      await edb.destroy();
      await admin.query(`drop database if exists ${fresh} with (force)`);
    }
  }
  const grown = rows
    .map((r) => ({ table: r.table, rows: Number(r.rows), bytes: Math.max(0, Number(r.bytes) - (empty.get(r.table) ?? 0)) }))
    .filter((r) => r.bytes > 0);

  // 5. Per session, per payment, and a year. A session (paid or not) writes its row, its deposit address and its stored
  //    answer; a payment adds the rest. Per-merchant rows (merchant, keys, HD account) and the overview's deltas (folded
  //    into one row per day, merchant, network and token by the console's overview job) do not grow per session.
  //    Every session ends with one event (payment.completed, .expired or .cancelled: the same outbox row, delivery and
  //    attempt), so the events' tables count per session, measured on the paid ones' events.
  const SESSION_TABLES = new Set(['payment_sessions', 'deposit_addresses', 'idempotency_keys']);
  const EVENT_TABLES = new Set(['outbox_events', 'webhook_deliveries', 'webhook_delivery_attempts']);
  const NOT_PER_SESSION = new Set([
    'merchants',
    'api_keys',
    'merchant_hd_accounts',
    'signer_state',
    'overview_daily_deltas',
    'overview_daily',
  ]);
  const retention = retentionSettingsFrom(retentionEnvSchema.parse({}));
  const keptDays: Record<string, number> = {
    webhook_deliveries: retention.webhookEventsMs! / 86_400_000,
    webhook_delivery_attempts: retention.webhookEventsMs! / 86_400_000,
    outbox_events: retention.webhookEventsMs! / 86_400_000,
    idempotency_keys: retention.idempotencyMs! / 86_400_000,
  };
  const perOwner = grown
    .filter((r) => !NOT_PER_SESSION.has(r.table))
    .map((r) => {
      const owner = SESSION_TABLES.has(r.table)
        ? ('session' as const)
        : EVENT_TABLES.has(r.table)
          ? ('event' as const)
          : ('payment' as const);
      return { ...r, owner, each: r.bytes / (owner === 'session' ? N : owner === 'event' ? relayed : paid), days: keptDays[r.table] };
    });
  const sum = (f: (r: (typeof perOwner)[number]) => boolean) => perOwner.filter(f).reduce((a, r) => a + r.each, 0);
  const perSession = sum((r) => r.owner !== 'payment');
  const perPayment = sum((r) => r.owner === 'payment');
  // Bytes a day of traffic adds: every session with its event, and the paid share's payments.
  const daily = (r: (typeof perOwner)[number]) => r.each * PER_DAY * (r.owner === 'payment' ? PAID_SHARE : 1);
  const yearNoRetention = perOwner.reduce((a, r) => a + daily(r) * 365, 0);
  const yearWithRetention = perOwner.reduce((a, r) => a + daily(r) * Math.min(365, r.days ?? 365), 0);
  const steady = perOwner.filter((r) => r.days !== undefined).reduce((a, r) => a + daily(r) * r.days!, 0);
  const gb = (b: number) => `${(b / 1e9).toFixed(1)} GB`;

  console.log(
    `\n${N} sessions (${paid} paid, ${relayed} events relayed and delivered once), created in ${(createdMs / 1000).toFixed(1)} s\n`,
  );
  console.log('| table | rows | bytes (heap + indexes + TOAST) | grows per | bytes each | pruned after |');
  console.log('|---|---|---|---|---|---|');
  for (const r of perOwner)
    console.log(
      `| ${r.table} | ${r.rows} | ${r.bytes} | ${r.owner} | ${Math.round(r.each)} | ${r.days === undefined ? 'never' : `${r.days} days`} |`,
    );
  const summary = {
    sessions: N,
    payments: paid,
    bytes_per_session: Math.round(perSession),
    bytes_per_payment: Math.round(perPayment),
    bytes_per_paid_session: Math.round(perSession + perPayment),
    sessions_per_day: PER_DAY,
    paid_percent: Math.round(PAID_SHARE * 100),
    year_without_retention: gb(yearNoRetention),
    year_with_default_retention: gb(yearWithRetention),
    pruneable_steady_state: gb(steady),
  };
  console.log(`\n${JSON.stringify(summary, null, 2)}`);
  if (process.env.BENCH_OUT)
    writeFileSync(
      process.env.BENCH_OUT,
      JSON.stringify({
        figures: `${summary.bytes_per_session} B per session + ${summary.bytes_per_payment} B per payment; ${PER_DAY} sessions/day (${summary.paid_percent}% paid): ${summary.year_without_retention} a year without retention, ${summary.year_with_default_retention} with the defaults`,
        target: 'figures for docs/performance.md "Storage" (no target)',
        met: null,
        ...summary,
      }),
    );
} finally {
  await db.destroy();
  redis.disconnect();
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
