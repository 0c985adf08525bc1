import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { Migrator, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RefundRouteDeps } from '../../src/api/routes/refunds.js';
import { buildServer } from '../../src/api/server.js';
import { createDb, type Db } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { newId } from '../../src/domain/ids.js';
import { createApiKey, createMerchant } from '../../src/ledger/merchants/merchants.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { TEST_MASTER_KEY, testServerDeps } from '../support/api-harness.js';
import { PG_ADMIN_URL, REDIS_URL, databaseUrl, runPrefix } from '../support/env.js';
import { markSessionPaid } from '../support/paid-session.js';
import { SignedClient } from '../support/signed-client.js';

// Issue 17, production guide: an upgrade of a database the previous release created, with live rows in it. The
// previous release's schema is the migration list up to the last one before 2026_11_24_0100 (the hardening slots
// came after it); its rows are written the way that release wrote them. Then the current migrations run under the
// advisory lock (migrateToLatest, as `npm start` and `npm run migrate` do), and the rows must be intact and usable
// through today's API.

const PREVIOUS_RELEASE_LAST = '2026_11_22_0200_reauthorization';
const NAMES = Object.keys(migrations);
const NEWER = NAMES.slice(NAMES.indexOf(PREVIOUS_RELEASE_LAST) + 1);

const chains: RefundRouteDeps['chains'] = {
  normalizeAddress: (network, _mode, text) => (network === 'ethereum' && /^0x[0-9a-fA-F]{40}$/.test(text) ? text.toLowerCase() : null),
  tokenDecimals: (network, _mode, token) => (network === 'ethereum' && (token === 'USDT' || token === 'USDC') ? 6 : undefined),
  displayAddress: (_n, _m, canonical) => canonical,
};

async function admin(text: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

/** A session row exactly as the previous release's insertSession wrote it (no quote or shortfall columns then). */
async function previousReleaseSession(db: Db, merchantId: string, orderId: string, amountMinor: bigint): Promise<string> {
  const id = newId('cs');
  await sql`insert into payment_sessions (id, merchant_id, mode, order_id, amount_minor, currency, description,
              merchant_domain_id, line_items, tax_minor, shipping_minor, success_url, cancel_url, metadata, target_currency,
              target_amount_minor, exchange_rate, rate_locked_at, network, token, hd_account, expires_at)
            values (${id}, ${merchantId}, 'test', ${orderId}, ${amountMinor}, 'USD', 'from the previous release', null,
              ${JSON.stringify([{ price_data: { currency: 'USD', unit_amount_minor: amountMinor.toString(), product_data: { name: 'Tea' } }, quantity: 1 }])},
              null, null, null, null, ${JSON.stringify({ order_id: orderId })}, 'USDT', ${amountMinor}, '1', now(), null, null,
              (select account_index from merchant_hd_accounts where merchant_id = ${merchantId} and mode = 'test'),
              now() + (select session_lifetime_seconds from merchants where id = ${merchantId}) * interval '1 second')`.execute(db);
  return id;
}

const columnsOf = async (db: Db, table: string) =>
  (await sql<{ column_name: string }>`select column_name from information_schema.columns where table_name = ${table}`.execute(db)).rows.map(
    (r) => r.column_name,
  );

let name: string;
let db: Db;
let redis: Redis;
let app: FastifyInstance | undefined;
const box = new SecretBox(TEST_MASTER_KEY);

beforeAll(async () => {
  name = `${runPrefix()}_upg_${randomBytes(4).toString('hex')}`;
  await admin(`create database ${name}`);
  db = createDb(databaseUrl(name), 5);
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
});
afterAll(async () => {
  await app?.close();
  redis?.disconnect();
  await db?.destroy();
  if (name) await admin(`drop database if exists ${name} with (force)`);
});

describe('upgrade from the previous release', () => {
  it('upgrades a database the previous release migrated and filled: rows intact, then usable through the API', async () => {
    expect(NEWER.slice(0, 5)).toEqual([
      '2026_11_24_0100_hardening_indexes',
      '2026_11_24_0200_merchant_session_lifetime',
      '2026_11_24_0300_underpayment_tolerance',
      '2026_11_24_0400_delivered_amounts',
      '2026_11_24_0550_wallet_nonce_guard',
    ]);

    // 1. The previous release's schema.
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
    const old = await migrator.migrateTo(PREVIOUS_RELEASE_LAST);
    expect(old.error).toBeUndefined();
    expect(old.results?.map((r) => r.migrationName)).toEqual(NAMES.slice(0, NAMES.indexOf(PREVIOUS_RELEASE_LAST) + 1));
    expect(await columnsOf(db, 'merchants')).not.toContain('underpayment_tolerance_bps');
    expect(await columnsOf(db, 'payment_sessions')).not.toContain('quote_usdt_minor');

    // 2. Live rows: a merchant and its keys (ledger), an open session and a paid one with a pending refund.
    const m = await createMerchant(db, box, { name: 'Old shop' });
    const live = await createApiKey(db, box, m.merchantId, 'live');
    const open = await previousReleaseSession(db, m.merchantId, 'old-open', 1250n);
    const paid = await previousReleaseSession(db, m.merchantId, 'old-paid', 1000n);
    await markSessionPaid(db, paid, { receivedBase: 10_000_000n, from: `0x${'22'.repeat(20)}` });
    // The previous release's refund row, in its own columns (today's createRefund writes columns it did not have).
    await sql`insert into refunds (id, merchant_id, mode, refund_id, session_id, order_id, amount_minor, currency, reason,
      description, metadata, status, network, token, destination_address, amount_base, request_fingerprint)
      values ('re_old_1', ${m.merchantId}, 'test', 'old-refund-1', ${paid}, 'old-paid', 400, 'USDT', 'requested_by_customer',
      null, '{}'::jsonb, 'pending', 'ethereum', 'USDT', ${`0x${'22'.repeat(20)}`}, 4000000, 'f-old')`.execute(db);
    const snapshot = async () => ({
      merchants: await db.selectFrom('merchants').selectAll().execute(),
      keys: await db.selectFrom('api_keys').selectAll().orderBy('created_at').execute(),
      sessions: await db.selectFrom('payment_sessions').selectAll().orderBy('order_id').execute(),
      deposits: await db.selectFrom('deposits').selectAll().execute(),
      settlements: await db.selectFrom('session_settlements').selectAll().execute(),
      refunds: await db.selectFrom('refunds').selectAll().execute(),
    });
    const before = await snapshot();
    expect(before.merchants[0]!.session_lifetime_seconds).toBe(1800); // the previous release's default, stored

    // 3. Upgrade, as every process does at start (advisory lock).
    const up = await migrateToLatest(db);
    expect(up.results?.map((r) => [r.migrationName, r.status])).toEqual(NEWER.map((n) => [n, 'Success']));
    const after = await snapshot();

    // 4. Intact: every value the previous release wrote is still there, besides the documented data migrations.
    const without = <T extends Record<string, unknown>>(rows: T[], ...cols: string[]) =>
      rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !cols.includes(k))));
    expect(without(after.merchants, 'session_lifetime_seconds', 'underpayment_tolerance_bps')).toEqual(
      without(before.merchants, 'session_lifetime_seconds'),
    );
    expect(after.merchants[0]).toMatchObject({ session_lifetime_seconds: null, underpayment_tolerance_bps: 0 }); // 1800 = "the deployment's"
    expect(after.keys).toEqual(before.keys);
    // merchant_id: backfilled from the deposit's session (migration 2026_12_01_0200).
    expect(without(after.deposits, 'merchant_id')).toEqual(before.deposits);
    const sessionMerchant = new Map(after.sessions.map((s) => [s.id, s.merchant_id]));
    for (const d of after.deposits) expect(d.merchant_id).toBe(d.session_id === null ? null : sessionMerchant.get(d.session_id));
    const sessionCols = ['quote_usdt_minor', 'quote_usdt_rate', 'quote_usdc_minor', 'quote_usdc_rate', 'shortfall_base'];
    expect(without(after.sessions, ...sessionCols)).toEqual(before.sessions);
    for (const s of after.sessions) {
      // Both coins quoted at the locked target amount, so the page still offers both.
      expect(s).toMatchObject({ quote_usdt_minor: s.target_amount_minor, quote_usdt_rate: '1', quote_usdc_minor: s.target_amount_minor });
    }
    expect(after.sessions.find((s) => s.id === paid)!.shortfall_base).toBe(0n);
    expect(after.sessions.find((s) => s.id === open)!.shortfall_base).toBeNull();
    expect(without(after.settlements, 'shortfall_base')).toEqual(before.settlements);
    expect(after.settlements[0]!.shortfall_base).toBe(0n);
    expect(without(after.refunds, 'delivered_base', 'deposit_id')).toEqual(before.refunds);
    expect(after.refunds[0]!.deposit_id).toBeNull();
    expect(after.refunds[0]!.delivered_base).toBeNull();

    // 5. Usable: today's API on the upgraded database, with the keys issued before the upgrade.
    app = await buildServer({
      ...testServerDeps({ db, redis, box, redisPrefix: `sp_test_upg_${randomBytes(3).toString('hex')}` }),
      chains,
    });
    const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
    const shop = new SignedClient(baseUrl, { key: m.testKey.key, secret: m.testKey.secret });
    const got = await shop.get(`/api/v1/checkout/sessions/${open}`);
    expect(got.status, got.text).toBe(200);
    expect(got.json).toMatchObject({ id: open, amount_total: '12.50', payment_status: 'unpaid', target_amount_total: '12.50' });
    expect(got.json.expires_at - got.json.created).toBe(1800);
    const oldRefund = await shop.get('/api/v1/refunds/old-refund-1');
    expect(oldRefund.status, oldRefund.text).toBe(200);
    expect(oldRefund.json).toMatchObject({ refund_id: 'old-refund-1', session_id: paid, amount: 400, status: 'pending' });
    // The pre-upgrade refund counts: 600 more fits the 10.00 paid, one unit more does not.
    const more = await shop.post('/api/v1/refunds/create', { refund_id: 'new-refund-1', session_id: paid, amount: 600, currency: 'USDT' });
    expect(more.status, more.text).toBe(201);
    const over = await shop.post('/api/v1/refunds/create', { refund_id: 'new-refund-2', session_id: paid, amount: 1, currency: 'USDT' });
    expect(over.json.error.code).toBe('REFUND_AMOUNT_EXCEEDED');
    const fresh = await shop.post('/api/v1/checkout/sessions/create', { amount: '3.00', currency: 'USD', order_id: 'after-upgrade' });
    expect(fresh.status, fresh.text).toBe(200);
    expect(
      (await shop.post('/api/v1/checkout/sessions/create', { amount: '3.00', currency: 'USD', order_id: 'old-open' })).json.error.code,
    ).toBe('order_id_conflict');
    const liveClient = new SignedClient(baseUrl, { key: live.key, secret: live.secret });
    expect((await liveClient.get(`/api/v1/checkout/sessions/${open}`)).status).toBe(404); // modes stay apart

    // 6. A second start migrates nothing.
    expect((await migrateToLatest(db)).results).toEqual([]);
  });
});
