import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { runRetention, startRetentionWorker, type RetentionReport } from '../../src/jobs/retention.js';
import type { RetentionSettings } from '../../src/jobs/retention-settings.js';
import { PRUNED_TABLES } from '../../src/ledger/retention/classes.js';
import { RETENTION_TABLES } from '../../src/metrics/retention.js';
import { runRetentionNow } from '../../src/operations/retention.js';
import { eventMerchant } from '../../src/operations/webhooks-resend.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { REDIS_URL } from '../support/env.js';

// Retention (issue 38, docs/retention.md) against the real Postgres: what is past its period and done goes, in bounded
// batches; what a live process still needs stays (an unrelayed or pending event, a recently resent delivery, a key
// inside its window, each chain's newest and highest reconcile run, a run with a finding, a console session not yet
// expired); money and journal rows are never touched; a dry run changes nothing; two runs at once share the rows.

const DAY = 86_400_000;
const NOW = new Date();
const ago = (ms: number) => new Date(NOW.getTime() - ms);
const SETTINGS: RetentionSettings = {
  webhookEventsMs: 90 * DAY,
  idempotencyMs: 168 * 3_600_000,
  reconcileRunsMs: 90 * DAY,
  consoleSessionsMs: 30 * DAY,
  intervalMs: 3_600_000,
  batchRows: 5000,
};
const MERCHANT = 'mch_retention';

let t: TestDatabase;
let db: Db;

// A database of its own per test (the journal and the audit log refuse TRUNCATE, by design).
beforeEach(async () => {
  t = await createTestDatabase();
  db = t.db;
});
afterEach(async () => t?.destroy());

async function addMerchant(): Promise<void> {
  await db.insertInto('merchants').values({ id: MERCHANT, name: 'Retention shop', webhook_url: null, webhook_secret_enc: 'x' }).execute();
}

/** An outbox event, relayed or not, with its delivery (status, created and last updated at) and `attempts` log rows. */
async function event(
  id: string,
  o: { createdAt: Date; relayed: boolean; delivery?: { status: string; updatedAt: Date }; attempts?: number },
): Promise<void> {
  const payload = JSON.stringify({ id, type: 'payment.completed', created_at: 1, data: { object: { id: 'cs_x', amount: '1.00' } } });
  await sql`insert into outbox_events (id, merchant_id, mode, type, aggregate_id, payload, created_at, relayed_at)
    values (${id}, ${MERCHANT}, 'test', 'payment.completed', 'cs_x', ${payload}::jsonb, ${o.createdAt}, ${o.relayed ? o.createdAt : null})`.execute(
    db,
  );
  if (!o.delivery) return;
  await sql`insert into webhook_deliveries (event_id, merchant_id, mode, event_type, body, status, created_at, updated_at, next_attempt_at)
    values (${id}, ${MERCHANT}, 'test', 'payment.completed', ${payload}, ${o.delivery.status}, ${o.createdAt}, ${o.delivery.updatedAt},
            ${o.createdAt})`.execute(db);
  for (let i = 1; i <= (o.attempts ?? 0); i++)
    await sql`insert into webhook_delivery_attempts (event_id, merchant_id, generation, attempt, url, status_code, latency_ms,
        response_excerpt, outcome, created_at)
      values (${id}, ${MERCHANT}, 0, ${i}, 'https://shop.example/hook', 200, 12, 'ok', 'delivered', ${o.createdAt})`.execute(db);
}

async function idempotencyKey(key: string, createdAt: Date): Promise<void> {
  await sql`insert into idempotency_keys (merchant_id, mode, scope, key, request_hash, response_status, response_body, created_at)
    values (${MERCHANT}, 'test', 'session.create', ${key}, 'h', 200, '{"id":"cs_x"}', ${createdAt})`.execute(db);
}

async function reconcileRun(network: string, height: number, finishedAt: Date, differences = 0): Promise<string> {
  const { rows } = await sql<{ id: string }>`insert into reconcile_runs (network, mode, height, addresses, balances, differences,
      rpc_calls, duration_ms, started_at, finished_at)
    values (${network}, 'test', ${height}, 3, 6, ${differences}, 4, 100, ${finishedAt}, ${finishedAt}) returning id::text`.execute(db);
  const id = rows[0]!.id;
  for (let i = 0; i < differences; i++)
    await sql`insert into reconcile_differences (run_id, account, asset, merchant_id, journal_base, chain_base, difference_base, unexplained_base)
      values (${id}::bigint, ${`deposit:0xa${i}`}, 'USDT', ${MERCHANT}, 100, 90, 10, 0)`.execute(db);
  return id;
}

async function consoleSession(id: string, expiresAt: Date): Promise<void> {
  await sql`insert into console_sessions (id_hash, user_id, csrf_token, ip, expires_at, created_at, last_seen_at)
    values (${id}, 'cu_ret', 'csrf', '10.0.0.1', ${expiresAt}, ${ago(400 * DAY)}, ${ago(400 * DAY)})`.execute(db);
}

/** Money and journal rows from long ago, which no retention may touch. */
async function moneyRows(): Promise<void> {
  await sql`insert into payment_sessions (id, merchant_id, mode, order_id, amount_minor, currency, target_currency, target_amount_minor,
      hd_account, status, created_at, expires_at, paid_at)
    values ('cs_old', ${MERCHANT}, 'test', 'o-old', 100, 'USD', 'USDT', 100, 1, 'paid', ${ago(900 * DAY)}, ${ago(899 * DAY)}, ${ago(899 * DAY)})`.execute(
    db,
  );
  const { rows } = await sql<{ id: string }>`insert into journal_entries (network, mode, tx_hash, leg_key, kind, block_height, session_id,
      created_at)
    values ('ethereum', 'test', '0xold', 'log:0', 'deposit', 10, 'cs_old', ${ago(900 * DAY)}) returning id::text`.execute(db);
  await sql`insert into journal_legs (entry_id, account, asset, amount)
    values (${rows[0]!.id}::bigint, 'deposit:0xa', 'USDT', 1000000), (${rows[0]!.id}::bigint, 'external', 'USDT', -1000000)`.execute(db);
}

const ids = async (q: ReturnType<typeof sql<{ id: string }>>): Promise<string[]> => (await q.execute(db)).rows.map((r) => r.id).sort();
const count = async (table: string): Promise<number> =>
  Number((await sql<{ n: string }>`select count(*) as n from ${sql.table(table)}`.execute(db)).rows[0]!.n);

async function seedScenario(): Promise<void> {
  await addMerchant();
  // Webhook events.
  await event('evt_delivered_old', {
    createdAt: ago(100 * DAY),
    relayed: true,
    delivery: { status: 'delivered', updatedAt: ago(100 * DAY) },
    attempts: 2,
  });
  await event('evt_failed_old', {
    createdAt: ago(120 * DAY),
    relayed: true,
    delivery: { status: 'failed', updatedAt: ago(119 * DAY) },
    attempts: 6,
  });
  await event('evt_skipped_old', {
    createdAt: ago(95 * DAY),
    relayed: true,
    delivery: { status: 'skipped', updatedAt: ago(95 * DAY) },
    attempts: 1,
  });
  await event('evt_retrying_old', {
    createdAt: ago(100 * DAY),
    relayed: true,
    delivery: { status: 'pending', updatedAt: ago(100 * DAY) },
    attempts: 3,
  });
  await event('evt_resent_recently', {
    createdAt: ago(100 * DAY),
    relayed: true,
    delivery: { status: 'delivered', updatedAt: ago(DAY) },
    attempts: 2,
  });
  await event('evt_delivered_recent', {
    createdAt: ago(DAY),
    relayed: true,
    delivery: { status: 'delivered', updatedAt: ago(DAY) },
    attempts: 1,
  });
  await event('evt_unrelayed_old', { createdAt: ago(100 * DAY), relayed: false });
  await event('evt_relayed_no_delivery', { createdAt: ago(100 * DAY), relayed: true });
  // Idempotency keys: 168 h window.
  await idempotencyKey('key-200h', ago(200 * 3_600_000));
  await idempotencyKey('key-170h', ago(170 * 3_600_000));
  await idempotencyKey('key-100h', ago(100 * 3_600_000));
  // Reconcile runs.
  await reconcileRun('ethereum', 100, ago(200 * DAY)); // old, clean: goes
  await reconcileRun('ethereum', 110, ago(190 * DAY), 2); // a finding: stays
  await reconcileRun('ethereum', 200, ago(180 * DAY)); // the chain's highest height: stays
  await reconcileRun('ethereum', 150, ago(170 * DAY)); // old, clean, neither newest nor highest: goes
  await reconcileRun('ethereum', 190, ago(DAY)); // the chain's newest: stays
  await reconcileRun('tron', 50, ago(300 * DAY)); // the only run of its chain: stays
  // Console sessions: 30 days after their absolute expiry.
  await sql`insert into console_users (id, email, role, password_hash) values ('cu_ret', 'ret@console.test', 'operator', 'x')`.execute(db);
  await consoleSession('sess_expired_40d', ago(40 * DAY));
  await consoleSession('sess_expired_10d', ago(10 * DAY));
  await consoleSession('sess_live', new Date(NOW.getTime() + DAY));
  await moneyRows();
}

const EXPECTED = {
  webhook_deliveries: 3,
  webhook_delivery_attempts: 9,
  outbox_events: 3,
  idempotency_keys: 2,
  reconcile_runs: 2,
  reconcile_differences: 0,
  console_sessions: 1,
};
const KEPT_TABLES = ['payment_sessions', 'journal_entries', 'journal_legs', 'merchants', 'console_users'];

describe('retention', () => {
  beforeEach(seedScenario);

  it('the metrics name every table a run deletes from, and only those', () => {
    expect([...RETENTION_TABLES].sort()).toEqual([...PRUNED_TABLES].sort());
    expect(Object.keys(EXPECTED).sort()).toEqual([...PRUNED_TABLES].sort());
  });

  it('a dry run counts exactly what a run then deletes, and changes nothing', async () => {
    const tables = Object.keys(EXPECTED);
    const before = Object.fromEntries(await Promise.all(tables.map(async (x) => [x, await count(x)] as const)));
    const dry = await runRetention(db, SETTINGS, { dryRun: true, now: NOW });
    expect(dry.dry_run).toBe(true);
    expect(dry.totals).toEqual(EXPECTED);
    for (const x of tables) expect(await count(x), x).toBe(before[x]);

    const run = await runRetention(db, SETTINGS, { now: NOW });
    expect(run.totals).toEqual(EXPECTED);
    for (const x of tables) expect(await count(x), x).toBe(before[x]! - EXPECTED[x as keyof typeof EXPECTED]);
    expect(run.classes.every((c) => c.complete)).toBe(true);
    // A second run finds nothing left.
    expect(Object.values((await runRetention(db, SETTINGS, { now: NOW })).totals).every((n) => n === 0)).toBe(true);
  });

  it('prunes settled events past the period with their bodies, attempts and outbox rows; keeps what is still needed', async () => {
    await runRetention(db, SETTINGS, { now: NOW });
    expect(await ids(sql<{ id: string }>`select event_id as id from webhook_deliveries`)).toEqual(
      ['evt_delivered_recent', 'evt_resent_recently', 'evt_retrying_old'].sort(),
    );
    expect(await ids(sql<{ id: string }>`select id from outbox_events`)).toEqual(
      ['evt_delivered_recent', 'evt_relayed_no_delivery', 'evt_resent_recently', 'evt_retrying_old', 'evt_unrelayed_old'].sort(),
    );
    // Attempts of the kept deliveries stay, every one; none of a pruned event is left.
    expect(await ids(sql<{ id: string }>`select distinct event_id as id from webhook_delivery_attempts`)).toEqual(
      ['evt_delivered_recent', 'evt_resent_recently', 'evt_retrying_old'].sort(),
    );
    expect(await count('webhook_delivery_attempts')).toBe(3 + 2 + 1);
    // A pruned event is unknown to a resend; a kept one is not.
    expect(await eventMerchant(db, 'evt_failed_old')).toBeUndefined();
    expect(await eventMerchant(db, 'evt_retrying_old')).toBe(MERCHANT);
  });

  it('keeps idempotency keys inside their window, findings and each chain’s newest and highest run, unexpired console sessions', async () => {
    await runRetention(db, SETTINGS, { now: NOW });
    expect(await ids(sql<{ id: string }>`select key as id from idempotency_keys`)).toEqual(['key-100h']);
    expect(await ids(sql<{ id: string }>`select network || ':' || height as id from reconcile_runs`)).toEqual(
      ['ethereum:110', 'ethereum:190', 'ethereum:200', 'tron:50'].sort(),
    );
    expect(await count('reconcile_differences')).toBe(2);
    expect(await ids(sql<{ id: string }>`select id_hash as id from console_sessions`)).toEqual(['sess_expired_10d', 'sess_live']);
    for (const x of KEPT_TABLES) expect(await count(x), x).toBeGreaterThan(0);
    expect(await count('journal_legs')).toBe(2);
    expect(await count('payment_sessions')).toBe(1);
  });

  it('keeps a class forever when its period is off, and reports it so', async () => {
    const off: RetentionSettings = {
      ...SETTINGS,
      webhookEventsMs: null,
      idempotencyMs: null,
      reconcileRunsMs: null,
      consoleSessionsMs: null,
    };
    const r = await runRetention(db, off, { now: NOW });
    expect(r.classes.map((c) => [c.class, c.retention_hours, c.cutoff])).toEqual([
      ['webhook_events', null, null],
      ['idempotency_keys', null, null],
      ['reconcile_runs', null, null],
      ['console_sessions', null, null],
    ]);
    expect(Object.values(r.totals).every((n) => n === 0)).toBe(true);
    expect(await count('webhook_deliveries')).toBe(6);
    expect(await count('idempotency_keys')).toBe(3);
  });

  it('deletes in batches and stops at the batch budget, the rest going next run', async () => {
    for (let i = 0; i < 25; i++) await idempotencyKey(`bulk-${i}`, ago(30 * DAY));
    const small = { ...SETTINGS, batchRows: 10 };
    const first = await runRetention(db, small, { now: NOW, maxBatches: 2 });
    const keys = first.classes.find((c) => c.class === 'idempotency_keys')!;
    expect(keys).toMatchObject({ rows: { idempotency_keys: 20 }, batches: 2, complete: false });
    const second = await runRetention(db, small, { now: NOW, maxBatches: 2 });
    expect(second.classes.find((c) => c.class === 'idempotency_keys')).toMatchObject({
      rows: { idempotency_keys: 7 },
      complete: true,
    });
    expect(await count('idempotency_keys')).toBe(1);
  });

  it('two runs at once share the rows: none deleted or counted twice, no deadlock', async () => {
    await sql`insert into outbox_events (id, merchant_id, mode, type, aggregate_id, payload, created_at, relayed_at)
      select 'evt_bulk_' || i, ${MERCHANT}, 'test', 'payment.completed', 'cs_b' || (i % 50), '{"a":1}'::jsonb, ${ago(100 * DAY)}, ${ago(100 * DAY)}
      from generate_series(1, 3000) i`.execute(db);
    await sql`insert into webhook_deliveries (event_id, merchant_id, mode, event_type, body, status, created_at, updated_at)
      select 'evt_bulk_' || i, ${MERCHANT}, 'test', 'payment.completed', '{"a":1}', 'delivered', ${ago(100 * DAY)}::timestamptz + i * interval '1 ms', ${ago(100 * DAY)}
      from generate_series(1, 3000) i`.execute(db);
    await sql`insert into webhook_delivery_attempts (event_id, merchant_id, generation, attempt, outcome, created_at)
      select 'evt_bulk_' || i, ${MERCHANT}, 0, 1, 'delivered', ${ago(100 * DAY)} from generate_series(1, 3000) i`.execute(db);
    await sql`insert into idempotency_keys (merchant_id, mode, scope, key, request_hash, response_status, response_body, created_at)
      select ${MERCHANT}, 'test', 'session.create', 'bulk-' || i, 'h', 200, '{}', ${ago(30 * DAY)}::timestamptz + i * interval '1 ms'
      from generate_series(1, 3000) i`.execute(db);
    const small = { ...SETTINGS, batchRows: 100 };
    const runs: RetentionReport[] = await Promise.all([runRetention(db, small, { now: NOW }), runRetention(db, small, { now: NOW })]);
    const sum = (table: string) => runs.reduce((s, r) => s + (r.totals[table] ?? 0), 0);
    expect(sum('webhook_deliveries')).toBe(3000 + EXPECTED.webhook_deliveries);
    expect(sum('webhook_delivery_attempts')).toBe(3000 + EXPECTED.webhook_delivery_attempts);
    expect(sum('outbox_events')).toBe(3000 + EXPECTED.outbox_events);
    expect(sum('idempotency_keys')).toBe(3000 + EXPECTED.idempotency_keys);
    // Both took part (SKIP LOCKED shares the batches rather than serialising them) and nothing old is left.
    expect(runs.every((r) => (r.totals.webhook_deliveries ?? 0) > 0)).toBe(true);
    expect(await count('webhook_deliveries')).toBe(3);
    expect(await count('idempotency_keys')).toBe(1);
  });

  it('each batch reads its index, not the whole table', async () => {
    await sql`insert into idempotency_keys (merchant_id, mode, scope, key, request_hash, response_status, response_body, created_at)
      select ${MERCHANT}, 'test', 'session.create', 'plan-' || i, 'h', 200, '{}', ${ago(DAY)}::timestamptz - i * interval '1 s'
      from generate_series(1, 20000) i`.execute(db);
    await sql`insert into console_sessions (id_hash, user_id, csrf_token, ip, expires_at)
      select 'plan-' || i, 'cu_ret', 'c', '10.0.0.1', ${ago(DAY)}::timestamptz - i * interval '1 s' from generate_series(1, 20000) i`.execute(
      db,
    );
    await sql`analyze idempotency_keys, console_sessions, webhook_deliveries, reconcile_runs`.execute(db);
    const plan = async (q: ReturnType<typeof sql>) =>
      (await sql<{ 'QUERY PLAN': string }>`explain ${q}`.execute(db)).rows.map((r) => r['QUERY PLAN']).join('\n');
    const cutoff = ago(7 * DAY);
    const keys = await plan(
      sql`select k.key from idempotency_keys k where k.created_at < ${cutoff} order by k.created_at limit 5000 for update of k skip locked`,
    );
    expect(keys).toMatch(/Index Scan using idempotency_keys_created_idx/);
    const sessions = await plan(
      sql`select s.id_hash from console_sessions s where s.expires_at < ${cutoff} order by s.expires_at limit 5000 for update of s skip locked`,
    );
    expect(sessions).toMatch(/Index Scan using console_sessions_expires_idx/);
  });

  it('the operator’s run writes an audit row with what went; a dry run writes none', async () => {
    const actor = { kind: 'cli' as const, id: 'ops' };
    await runRetentionNow({ db }, actor, SETTINGS, { dryRun: true });
    expect(await count('console_audit')).toBe(0);
    const r = await runRetentionNow({ db }, actor, SETTINGS, { dryRun: false });
    expect(r.totals).toEqual(EXPECTED);
    const audit = await db.selectFrom('console_audit').selectAll().execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: 'retention.run', actor_kind: 'cli', actor_id: 'ops', after: EXPECTED });
  });

  it('the worker role runs it on its BullMQ schedule and reports each run', async () => {
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const prefix = `sp_ret_${randomBytes(4).toString('hex')}`;
    const reports: RetentionReport[] = [];
    const worker = await startRetentionWorker(
      { connection: redis, prefix },
      { db, settings: { ...SETTINGS, intervalMs: 200 }, onRun: (r) => reports.push(r) },
    );
    try {
      const deadline = Date.now() + 20_000;
      while (reports.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(reports.length).toBeGreaterThan(0);
      expect(reports[0]!.totals).toEqual(EXPECTED);
      expect(await count('webhook_deliveries')).toBe(3);
    } finally {
      await worker.stop();
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
  });
});
