import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createDb, type Db } from '../../src/db/database.js';
import { createLogger } from '../../src/logger.js';
import { start, type RunningService } from '../../src/main.js';
import { createQueue } from '../../src/jobs/queues.js';
import { freePort } from '../support/anvil.js';
import { transfersFrom } from '../support/chain-watch.js';
import { scrape } from '../support/metrics-scrape.js';
import { PG_ADMIN_URL, REDIS_URL, databaseUrl, runPrefix } from '../support/env.js';
import { fund, payFrom, walletAt } from '../support/evm-tokens/scenario.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';
import { SignedClient } from '../support/signed-client.js';

// Issue 17, production guide: backup and restore, tested. The whole service runs on Anvil; while one payment waits
// for its confirmations and a refund's payout sits in the mempool, pg_dump copies the database. The first service
// goes on (the payment is credited, the refund lands, a third payment arrives), then stops. The dump is restored into
// a new database and a new service starts on it with an empty Redis (its queues lost too). It must end where the
// first one did: every deposit credited exactly once (the watcher re-scans from the restored cursor), the refund paid
// once (its attempt is in the dump: the outbound engine finds the landed transaction by hash and signs nothing new).
// A second refund exists in the dump but was signed and paid only after it: restored, the ledger does not know that
// transaction, and the outbound engine's guard (the hot wallet's chain nonce is ahead of the stored one) signs nothing
// until the operator records the payment (`payouts settle-from-chain`) and accepts the chain's nonce (audited).

const run = promisify(execFile);
let h: ServiceHarness;
let shop: HarnessMerchant;
let dir: string;
let restored: { name: string; db: Db; service: RunningService | null; prefix: string } | null = null;

/** The operator CLI as a real child process, on the restored deployment's settings. */
async function cli(env: Record<string, string>, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  try {
    const r = await run('node', ['--import', 'tsx', 'src/cli/index.ts', ...args], { env: { ...process.env, ...env } });
    return { code: 0, out: r.stdout, err: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}

async function admin(text: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  h = await startServiceHarness({ extraEnv: { PAYOUT_STUCK_AFTER_MS: '600000' } });
  shop = await h.newMerchant('Backup shop');
  await h.node.rpc('anvil_setBalance', [shop.hotWallet, `0x${(10n ** 19n).toString(16)}`]);
  await fund(h.tokens.USDT, shop.hotWallet, 1_000_000_000n);
  dir = mkdtempSync(join(tmpdir(), 'sp-backup-'));
});

afterAll(async () => {
  await h.node.rpc('evm_setAutomine', [true]).catch(() => {});
  if (restored) {
    await restored.service?.stop().catch(() => {});
    await restored.db.destroy().catch(() => {});
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${restored.prefix}:*`);
    for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
    redis.disconnect();
    await admin(`drop database if exists ${restored.name} with (force)`);
  }
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A session with Ethereum + USDT chosen, as the page's selection does: its deposit address and amount. */
async function openSession(amount: string): Promise<{ id: string; address: string; due: bigint }> {
  const created = await shop.client.post('/api/v1/checkout/sessions/create', {
    amount,
    currency: 'USD',
    order_id: `bk-${randomBytes(5).toString('hex')}`,
  });
  expect(created.status, created.text).toBe(200);
  const sel = await fetch(`${h.base}/checkout/sessions/${created.json.id}/select`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ network: 'ethereum', token: 'USDT' }),
  });
  const s = (await sel.json()) as { deposit_address: string; amount_due_base: string };
  return { id: created.json.id as string, address: s.deposit_address, due: BigInt(s.amount_due_base) };
}

async function payer(index: number, amount: bigint) {
  const w = walletAt(index, h.node.provider);
  await h.node.rpc('anvil_setBalance', [w.address, '0xde0b6b3a7640000']);
  await fund(h.tokens.USDT, w.address, amount);
  return w;
}

/** What the ledger holds about the sessions and the refund: compared between the original and the restored database. */
async function ledgerView(db: Db, sessionIds: string[], refundId: string) {
  const sessions = await db
    .selectFrom('payment_sessions')
    .select(['id', 'status', 'received_base'])
    .where('id', 'in', sessionIds)
    .orderBy('id')
    .execute();
  const credited = await db
    .selectFrom('deposits')
    .select(['session_id', 'tx_hash', 'log_index', 'amount_base'])
    .where('session_id', 'in', sessionIds)
    .where('disposition', '=', 'credited')
    .orderBy('tx_hash')
    .execute();
  const completedEvents = await db
    .selectFrom('outbox_events')
    .select('aggregate_id')
    .where('type', '=', 'payment.completed')
    .where('aggregate_id', 'in', sessionIds)
    .orderBy('aggregate_id')
    .execute();
  const refund = await db
    .selectFrom('refunds')
    .select(['id', 'status', 'transaction_hash'])
    .where('refund_id', '=', refundId)
    .executeTakeFirstOrThrow();
  const attempts = await db
    .selectFrom('payout_attempts')
    .select(['tx_hash', 'nonce', 'state'])
    .where('refund_id', '=', refund.id)
    .execute();
  return { sessions, credited, completedEvents: completedEvents.map((e) => e.aggregate_id), refund, attempts };
}

describe('backup and restore mid-traffic', () => {
  it('restores a pg_dump taken mid-traffic: no deposit lost or credited twice, no refund paid twice', async () => {
    // Before the dump: one session paid (to be refunded), one paid on chain but not yet final, one not paid yet.
    const s1 = await h.paidSession(shop, { amount: '10.00', token: 'USDT' });
    const s4 = await h.paidSession(shop, { amount: '5.00', token: 'USDT', payerIndex: 43 });
    const s2 = await openSession('7.00');
    const s3 = await openSession('3.00');
    await payFrom(await payer(41, s2.due), h.tokens.USDT, s2.address, s2.due); // 1 confirmation of 2
    await h.until(async () => {
      const d = await h.t.db.selectFrom('deposits').select('status').where('session_id', '=', s2.id).executeTakeFirst();
      return d?.status === 'provisional' ? true : undefined;
    });

    // The refund's payout is signed, stored and broadcast, and waits in the mempool (no block is mined).
    await h.node.rpc('evm_setAutomine', [false]);
    const refundId = `bk-refund-${randomBytes(4).toString('hex')}`;
    const created = await shop.client.post('/api/v1/refunds/create', {
      refund_id: refundId,
      session_id: s1.id,
      amount: 1000,
      currency: 'USDT',
    });
    expect(created.status, created.text).toBe(201);
    const inFlight = await h.until(async () => {
      const a = await h.t.db
        .selectFrom('payout_attempts')
        .innerJoin('refunds', 'refunds.id', 'payout_attempts.refund_id')
        .select(['payout_attempts.tx_hash', 'payout_attempts.state'])
        .where('refunds.refund_id', '=', refundId)
        .executeTakeFirst();
      return a?.state === 'broadcast' ? a : undefined;
    });
    const pending = await h.node.rpc<{ blockNumber: string | null }>('eth_getTransactionByHash', [inFlight.tx_hash]);
    expect(pending.blockNumber).toBeNull();

    // A second refund is accepted but not signed yet when the backup runs (its payout job waits in a paused queue).
    const queueRedis = new Redis(REDIS_URL);
    const payouts = createQueue('payouts', { connection: queueRedis, prefix: h.env.REDIS_KEY_PREFIX! });
    await payouts.pause();
    const laterId = `bk-later-${randomBytes(4).toString('hex')}`;
    const later = await shop.client.post('/api/v1/refunds/create', {
      refund_id: laterId,
      session_id: s4.id,
      amount: 200,
      currency: 'USDT',
    });
    expect(later.status, later.text).toBe(201);

    // The backup, mid-traffic.
    const dump = join(dir, 'stablepay.dump');
    await run('pg_dump', ['--format=custom', '--file', dump, '--dbname', h.t.url]);
    const atDump = await ledgerView(h.t.db, [s1.id, s2.id, s3.id], refundId);
    expect(atDump.refund.status).toBe('processing');
    const laterAtDump = await ledgerView(h.t.db, [s4.id], laterId);
    expect(laterAtDump.refund.status).toBe('pending');
    expect(laterAtDump.attempts).toEqual([]);
    const n = atDump.attempts[0]!.nonce!; // the first refund's nonce: the dump's wallet row says n + 1 is next
    expect(Object.fromEntries(atDump.sessions.map((s) => [s.id, s.status]))).toEqual({ [s1.id]: 'paid', [s2.id]: 'open', [s3.id]: 'open' });

    // Traffic goes on after the backup: the refund lands, s2 becomes final, s3 is paid.
    await h.node.rpc('evm_setAutomine', [true]);
    await h.node.mine(2);
    await payFrom(await payer(42, s3.due), h.tokens.USDT, s3.address, s3.due);
    await h.node.mine(2);
    const paidOnA = async (id: string) =>
      (await shop.client.get(`/api/v1/checkout/sessions/${id}`)).json.payment_status === 'paid' ? true : undefined;
    await h.until(() => paidOnA(s2.id));
    await h.until(() => paidOnA(s3.id));
    await h.until(async () => ((await shop.client.get(`/api/v1/refunds/${refundId}`)).json.status === 'completed' ? true : undefined));
    const original = await ledgerView(h.t.db, [s1.id, s2.id, s3.id], refundId);
    expect(original.refund.transaction_hash).toBe(inFlight.tx_hash);
    // The second refund is paid after the backup, at the next nonce.
    await payouts.resume();
    const completedOn = (client: SignedClient, id: string) =>
      h.until(async () => {
        await h.node.mine(1); // automine mines only on a transaction: confirmations need blocks
        return (await client.get(`/api/v1/refunds/${id}`)).json.status === 'completed' ? true : undefined;
      }, 45_000);
    await completedOn(shop.client, laterId);
    await payouts.close();
    queueRedis.disconnect();
    const laterOriginal = await ledgerView(h.t.db, [s4.id], laterId);
    expect(laterOriginal.attempts.map((a) => a.nonce)).toEqual([n + 1n]);
    const laterTx = laterOriginal.refund.transaction_hash!;

    // The first service stops for good (its Redis keys stay behind, unused: the restored one starts on an empty prefix).
    await h.service.stop();
    const stopped = h.service;
    h.service = { ...stopped, stop: async () => {} };

    // Restore into a new database and start a new service on it.
    const name = `${runPrefix()}_restored_${randomBytes(4).toString('hex')}`;
    await admin(`create database ${name}`);
    const url = databaseUrl(name);
    const prefix = `sp_restored_${randomBytes(4).toString('hex')}`;
    restored = { name, db: createDb(url, 5), service: null, prefix };
    await run('pg_restore', ['--no-owner', '--exit-on-error', '--dbname', url, dump]);
    const metricsPort = await freePort();
    const env = { ...h.env, DATABASE_URL: url, REDIS_KEY_PREFIX: prefix, PORT: '0', METRICS_PORT: String(metricsPort) };
    const config = loadConfig(env);
    restored.service = await start(config, env, createLogger(config.LOG_LEVEL));
    const b = new SignedClient(`http://127.0.0.1:${restored.service.port}`, shop.client.creds);
    const db = restored.db;

    // The restored service catches up by itself: the watcher re-scans from the dumped cursor, the payout sweep
    // re-queues the refund (Redis came back empty) and the engine finds its transaction on chain by hash.
    const paidOnB = async (id: string) =>
      (await b.get(`/api/v1/checkout/sessions/${id}`)).json.payment_status === 'paid' ? true : undefined;
    await h.until(() => paidOnB(s2.id), 45_000);
    await h.until(() => paidOnB(s3.id), 45_000);
    await h.until(async () => ((await b.get(`/api/v1/refunds/${refundId}`)).json.status === 'completed' ? true : undefined), 45_000);
    // Let it run on: more blocks and several payout sweeps (PAYOUT_SWEEP_INTERVAL_MS=2000) must change nothing.
    for (let i = 0; i < 5; i++) {
      await h.node.mine(1);
      await new Promise((r) => setTimeout(r, 1000));
    }

    const after = await ledgerView(db, [s1.id, s2.id, s3.id], refundId);
    expect(after.sessions).toEqual(original.sessions);
    // By id, not by position: the database's collation and JavaScript's sort may order mixed-case ids differently.
    expect(Object.fromEntries(after.sessions.map((s) => [s.id, s.received_base]))).toEqual({
      [s1.id]: 10_000_000n,
      [s2.id]: s2.due,
      [s3.id]: s3.due,
    });
    // Every deposit credited exactly once: one per session, the same transfers the original credited.
    expect(after.credited).toEqual(original.credited);
    expect(after.credited.map((d) => d.session_id).sort()).toEqual([s1.id, s2.id, s3.id].sort());
    expect([...after.completedEvents].sort()).toEqual([s1.id, s2.id, s3.id].sort());
    // The refund: the one attempt of the dump, confirmed; nothing signed again; one transfer on chain.
    expect(after.refund).toMatchObject({ status: 'completed', transaction_hash: inFlight.tx_hash });
    expect(after.attempts).toEqual([{ tx_hash: inFlight.tx_hash, nonce: atDump.attempts[0]!.nonce, state: 'confirmed' }]);
    const refundEvents = await db.selectFrom('outbox_events').select('type').where('aggregate_id', '=', after.refund.id).execute();
    expect(refundEvents.map((e) => e.type)).toEqual(['refund.succeeded']);

    // The second refund, paid after the backup: the restored ledger has it unsigned, the chain has the wallet at n + 2.
    // The engine signs nothing from the wallet; the chain shows exactly one transfer for it.
    const paidTransfers = [
      { to: s1.payer, amount: 10_000_000n, tx: inFlight.tx_hash },
      { to: s4.payer, amount: 2_000_000n, tx: laterTx },
    ];
    expect(await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet)).toEqual(paidTransfers);
    const walletRow = () =>
      db
        .selectFrom('hot_wallet_nonces')
        .selectAll()
        .where('network', '=', 'ethereum')
        .where((eb) => eb(eb.fn('lower', ['address']), '=', shop.hotWallet.toLowerCase()))
        .executeTakeFirstOrThrow();
    const noted = await h.until(async () => {
      const w = await walletRow();
      return w.unknown_chain_nonce !== null ? w : undefined;
    }, 45_000);
    expect(noted.next_nonce).toBe(n + 1n);
    expect(noted.unknown_chain_nonce).toBe(n + 2n);
    const laterRestored = await ledgerView(db, [s4.id], laterId);
    expect(laterRestored.refund.status).toBe('processing');
    expect(laterRestored.attempts).toEqual([]);
    const gauge = { network: 'ethereum', mode: 'test' };
    expect((await scrape(metricsPort)).get('stablepay_outbound_wallet_unknown_transactions', gauge)).toBe(1);
    // The operator sees it in `payouts wallets`.
    const wallets = await cli(env, 'payouts', 'wallets', '--merchant', shop.id);
    expect(wallets.code, wallets.err).toBe(0);
    const shown = (JSON.parse(wallets.out) as Array<Record<string, unknown>>).find(
      (w) => w.network === 'ethereum' && String(w.address).toLowerCase() === shop.hotWallet.toLowerCase(),
    );
    expect(shown).toMatchObject({ next_nonce: String(n + 1n), unknown_transactions: { chain_nonce: String(n + 2n) } });
    // Several more payout sweeps: still nothing signed.
    await new Promise((r) => setTimeout(r, 5000));
    expect(await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet)).toEqual(paidTransfers);
    expect((await ledgerView(db, [s4.id], laterId)).attempts).toEqual([]);

    // The operator looks at the wallet's transactions with nonces n + 1 .. n + 2 - 1 on an explorer, finds the second
    // refund's transfer, and records it: the engine settles the refund from that transaction's logs.
    const wrong = await cli(
      env,
      'payouts',
      'settle-from-chain',
      laterId,
      '--merchant',
      shop.id,
      '--tx',
      inFlight.tx_hash,
      '--actor',
      'ops@example',
    );
    expect(wrong.code).toBe(2); // the first refund's transfer did not pay this refund's destination
    const settled = await cli(
      env,
      'payouts',
      'settle-from-chain',
      laterId,
      '--merchant',
      shop.id,
      '--tx',
      laterTx,
      '--actor',
      'ops@example',
    );
    expect(settled.code, settled.err).toBe(0);
    await h.until(async () => ((await b.get(`/api/v1/refunds/${laterId}`)).json.status === 'completed' ? true : undefined), 45_000);
    expect((await ledgerView(db, [s4.id], laterId)).refund).toMatchObject({ status: 'completed', transaction_hash: laterTx });
    // Then accepts the chain's nonce: a stale one is refused; the accepted one is audited and clears the guard.
    const stale = await cli(
      env,
      'payouts',
      'wallet-accept-nonce',
      '--network',
      'ethereum',
      '--mode',
      'test',
      '--address',
      shop.hotWallet,
      '--nonce',
      String(n + 1n),
      '--actor',
      'ops@example',
    );
    expect(stale.code).toBe(2);
    const accepted = await cli(
      env,
      'payouts',
      'wallet-accept-nonce',
      '--network',
      'ethereum',
      '--mode',
      'test',
      '--address',
      shop.hotWallet,
      '--nonce',
      String(n + 2n),
      '--actor',
      'ops@example',
      '--note',
      'restore: checked the explorer',
    );
    expect(accepted.code, accepted.err).toBe(0);
    expect(JSON.parse(accepted.out)).toMatchObject({
      previous_next_nonce: String(n + 1n),
      next_nonce: String(n + 2n),
      actor: 'ops@example',
    });
    const audit = await db.selectFrom('hot_wallet_nonce_acceptances').selectAll().execute();
    expect(audit.map((a) => [a.previous_next_nonce, a.accepted_next_nonce, a.actor, a.note])).toEqual([
      [n + 1n, n + 2n, 'ops@example', 'restore: checked the explorer'],
    ]);
    expect((await walletRow()).unknown_chain_nonce).toBeNull();
    expect((await scrape(metricsPort)).get('stablepay_outbound_wallet_unknown_transactions', gauge) ?? 0).toBe(0);
    // Payouts resume at the chain's nonce.
    const third = `bk-third-${randomBytes(4).toString('hex')}`;
    expect((await b.post('/api/v1/refunds/create', { refund_id: third, session_id: s4.id, amount: 100, currency: 'USDT' })).status).toBe(
      201,
    );
    await completedOn(b, third);
    const thirdView = await ledgerView(db, [s4.id], third);
    expect(thirdView.attempts.map((a) => a.nonce)).toEqual([n + 2n]);
    expect(await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet)).toEqual([
      ...paidTransfers,
      { to: s4.payer, amount: 1_000_000n, tx: thirdView.refund.transaction_hash },
    ]);
  }, 240_000);
});
