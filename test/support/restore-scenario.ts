import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { expect } from 'vitest';
import { HOT_WALLET_SLOT, type ChainAdapter, type TokenSymbol } from '../../chains/types.js';
import { payoutsCli } from '../../src/cli/payouts.js';
import { loadConfig } from '../../src/config.js';
import { createDb, type Db } from '../../src/db/database.js';
import { createQueue } from '../../src/jobs/queues.js';
import { createLogger } from '../../src/logger.js';
import { start, type RunningService } from '../../src/main.js';
import { freePort } from './anvil.js';
import { STANDARD_TEST_MNEMONIC, testSigner, type ChainHarnessMerchant, type ChainServiceHarness } from './chain-service-harness.js';
import { harnessSigner, type HarnessSigner } from './signer-role.js';
import { PG_ADMIN_URL, REDIS_URL, databaseUrl, runPrefix } from './env.js';
import { scrape } from './metrics-scrape.js';
import { SignedClient } from './signed-client.js';

// Issue 36, "Restores never pay twice", on a family without account nonces (TRON, Solana): the scenario both
// restore tests run. A refund is paid before the backup (known to the dump); a second one exists in the dump unpaid
// (its payout job waits in a paused queue while pg_dump runs) and is paid after it; the hot wallet's key is also used
// by hand after it. The dump is restored into a new database and a new service (empty Redis) starts on it: the
// engine lists the wallet's outgoing transactions, finds the two the restored ledger does not know, and holds the
// wallet (nothing paid twice); the operator sees exactly those two (`payouts wallet-unknown`), settles the refund
// from its transfer (`settle-from-chain`), accepts the hand-made one (`wallet-accept-transactions`, audited), and
// payouts resume.

const run = promisify(execFile);
/** A row of `payouts wallet-unknown`, as printed. */
type Listed = { tx_hash: string; status: string; address: string };

export interface RestoreFamily {
  h: ChainServiceHarness;
  network: 'tron' | 'solana';
  token: TokenSymbol;
  /** A session of `amount` paid to the merchant, and its payer (the refund's destination, canonical). */
  paidSession(m: ChainHarnessMerchant, amount: string): Promise<{ id: string; payer: string }>;
  /** Amounts of the token that reached `to` from the merchant's hot wallet, as the chain shows them, oldest first. */
  paidTo(m: ChainHarnessMerchant, to: string): Promise<bigint[]>;
  /** An address of nobody's, to receive the hand-made transfer. */
  stranger: string;
  /** Native coin and tokens for the merchant's hot wallet. */
  fund(m: ChainHarnessMerchant): Promise<void>;
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

export async function runRestoreScenario(f: RestoreFamily): Promise<void> {
  const { h } = f;
  const shop = await h.newMerchant('Restore shop');
  await f.fund(shop);
  const dir = mkdtempSync(join(tmpdir(), 'sp-restore-'));
  let restored: { name: string; db: Db; service: RunningService | null; prefix: string; signer: HarnessSigner } | null = null;
  const queueRedis = new Redis(REDIS_URL);
  try {
    const s1 = await f.paidSession(shop, '10.00');
    const s2 = await f.paidSession(shop, '5.00');
    // Paid before the backup: the dump knows its attempt.
    const r0 = await h.createRefund(shop, { session_id: s1.id, amount: 300, currency: f.token });
    expect(r0.status, JSON.stringify(r0.json)).toBe(201);
    const r0Done = await h.settled(shop, r0.json.refund_id);
    expect(r0Done.status).toBe('completed');

    // Accepted before the backup, paid after it.
    const payouts = createQueue('payouts', { connection: queueRedis, prefix: h.env.REDIS_KEY_PREFIX! });
    await payouts.pause();
    const r1 = await h.createRefund(shop, { session_id: s2.id, amount: 200, currency: f.token });
    expect(r1.status, JSON.stringify(r1.json)).toBe(201);
    const dump = join(dir, 'stablepay.dump');
    await run('pg_dump', ['--format=custom', '--file', dump, '--dbname', h.t.url]);
    const r1Row = await h.t.db
      .selectFrom('refunds')
      .select(['id', 'status'])
      .where('refund_id', '=', r1.json.refund_id)
      .executeTakeFirstOrThrow();
    expect(r1Row.status).toBe('pending');
    await payouts.resume();
    const r1Done = await h.settled(shop, r1.json.refund_id);
    expect(r1Done.status).toBe('completed');
    const paidTx: string = r1Done.transaction_hash;
    await payouts.close();

    // The hot wallet's key used by hand after the backup (a transfer the ledger never signed).
    const wallet = await h.adapter.deriveHotWallet(testSigner, shop.account, HOT_WALLET_SLOT.refunds);
    const signed = await h.adapter.signTransfer(
      await h.adapter.buildTokenTransfer({ from: wallet, to: f.stranger, token: f.token, amount: 1_000_000n }),
      testSigner,
    );
    expect((await h.adapter.broadcast(signed)).status).not.toBe('rejected');
    await h.until(async () => ((await h.adapter.getTransactionOutcome(signed.hash)).status === 'succeeded' ? true : undefined));
    const handTx = signed.hash;
    expect(await f.paidTo(shop, s2.payer)).toEqual([2_000_000n]);

    // The first service stops for good; the dump is restored and a new service starts on it, with an empty Redis.
    await h.service.stop();
    const stopped = h.service;
    h.service = { ...stopped, stop: async () => {} };
    const name = `${runPrefix()}_restored_${randomBytes(4).toString('hex')}`;
    await admin(`create database ${name}`);
    const url = databaseUrl(name);
    const prefix = `sp_restored_${randomBytes(4).toString('hex')}`;
    // The restored deployment's signer reads the restored ledger, as a real restore restarts every role on it.
    const signer = harnessSigner(STANDARD_TEST_MNEMONIC, { inProcess: h.env.SIGNER_SOCKET === undefined });
    restored = { name, db: createDb(url, 5), service: null, prefix, signer };
    await run('pg_restore', ['--no-owner', '--exit-on-error', '--dbname', url, dump]);
    const metricsPort = await freePort();
    const env = { ...h.env, ...signer.keyEnv, DATABASE_URL: url, REDIS_KEY_PREFIX: prefix, PORT: '0', METRICS_PORT: String(metricsPort) };
    const config = loadConfig(env);
    restored.service = await start(config, env, createLogger(config.LOG_LEVEL));
    await signer.start(env);
    const service = restored.service;
    const db = restored.db;
    const b = new SignedClient(`http://127.0.0.1:${service.port}`, shop.client.creds);
    const adapter: ChainAdapter = service.adapters.get(f.network, 'test')!;
    const cli = async <T = Listed[]>(...args: string[]): Promise<T> => {
      let printed: unknown;
      await payoutsCli(args, {
        db,
        adapters: async () => service.adapters,
        keys: testSigner,
        enqueue: async () => {},
        out: (v) => {
          printed = v;
        },
      });
      return JSON.parse(JSON.stringify(printed, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
    };

    // The engine holds the wallet: the two transactions the restored ledger does not know are noted, nothing else.
    const noted = await h.until(async () => {
      const rows = await db.selectFrom('hot_wallet_unknown_transactions').selectAll().orderBy('id').execute();
      return rows.length >= 2 ? rows : undefined;
    }, 45_000);
    expect(noted.map((r) => r.tx_hash).sort()).toEqual([paidTx, handTx].sort());
    expect(new Set(noted.map((r) => r.address))).toEqual(new Set([wallet.address]));
    expect(noted.every((r) => r.accepted_at === null && r.failed === false && r.chain_time !== null)).toBe(true);
    const gauge = { network: f.network, mode: 'test' };
    await h.until(async () =>
      (await scrape(metricsPort)).get('stablepay_outbound_wallet_unknown_transactions', gauge) === 1 ? true : undefined,
    );
    // Several payout passes later: the refund paid after the backup is not paid again.
    await new Promise((r) => setTimeout(r, 4000));
    const r1Restored = await db.selectFrom('refunds').select(['status']).where('id', '=', r1Row.id).executeTakeFirstOrThrow();
    expect(r1Restored.status).not.toBe('completed');
    expect(await db.selectFrom('payout_attempts').select('id').where('refund_id', '=', r1Row.id).execute()).toEqual([]);
    expect(await f.paidTo(shop, s2.payer)).toEqual([2_000_000n]);

    // The operator sees exactly those two transactions.
    const listed = await cli('wallet-unknown', '--network', f.network);
    expect(listed.map((r) => [r.tx_hash, r.status]).sort()).toEqual(
      [
        [paidTx, 'held'],
        [handTx, 'held'],
      ].sort(),
    );
    expect(listed.every((r) => r.address === adapter.displayAddress(wallet.address))).toBe(true);

    // The refund is settled from the transfer that paid it; the hand-made one still holds the wallet.
    const settled = await cli<Record<string, unknown>>(
      'settle-from-chain',
      r1.json.refund_id,
      '--merchant',
      shop.id,
      '--tx',
      paidTx,
      '--actor',
      'ops@example',
    );
    expect(settled).toMatchObject({ refund_id: r1.json.refund_id, tx_hash: paidTx, recorded_by: 'ops@example' });
    await h.until(
      async () => ((await b.get(`/api/v1/refunds/${r1.json.refund_id}`)).json.status === 'completed' ? true : undefined),
      45_000,
    );
    expect((await b.get(`/api/v1/refunds/${r1.json.refund_id}`)).json.transaction_hash).toBe(paidTx);
    expect((await cli('wallet-unknown')).map((r) => r.tx_hash)).toEqual([handTx]);
    expect((await cli('wallet-unknown', '--all')).find((r) => r.tx_hash === paidTx)?.status).toBe('recorded');
    expect((await scrape(metricsPort)).get('stablepay_outbound_wallet_unknown_transactions', gauge)).toBe(1);

    // Accept: only held transactions of that wallet (the recorded payout is refused), audited with actor and note.
    const accept = (...tx: string[]) =>
      cli<Record<string, unknown>>(
        'wallet-accept-transactions',
        '--network',
        f.network,
        '--mode',
        'test',
        '--address',
        adapter.displayAddress(wallet.address),
        ...tx.flatMap((t) => ['--tx', t]),
        '--actor',
        'ops@example',
        '--note',
        'restore: moved by hand, checked on the explorer',
      );
    await expect(accept(paidTx)).rejects.toThrow(/not held/);
    expect(await accept(handTx)).toMatchObject({ accepted: [handTx], actor: 'ops@example' });
    const audit = await db
      .selectFrom('hot_wallet_unknown_transactions')
      .selectAll()
      .where('tx_hash', '=', handTx)
      .executeTakeFirstOrThrow();
    expect([audit.accepted_by, audit.note, audit.accepted_at !== null]).toEqual([
      'ops@example',
      'restore: moved by hand, checked on the explorer',
      true,
    ]);
    expect(await cli('wallet-unknown')).toEqual([]);
    expect((await scrape(metricsPort)).get('stablepay_outbound_wallet_unknown_transactions', gauge) ?? 0).toBe(0);

    // Payouts resume: a new refund is paid once; the earlier one still once.
    const r2 = await b.post('/api/v1/refunds/create', {
      refund_id: `rs-${randomBytes(4).toString('hex')}`,
      session_id: s2.id,
      amount: 100,
      currency: f.token,
    });
    expect(r2.status, r2.text).toBe(201);
    await h.until(
      async () => ((await b.get(`/api/v1/refunds/${r2.json.refund_id}`)).json.status === 'completed' ? true : undefined),
      45_000,
    );
    expect(await f.paidTo(shop, s2.payer)).toEqual([2_000_000n, 1_000_000n]);
  } finally {
    queueRedis.disconnect();
    if (restored) {
      await restored.service?.stop().catch(() => {});
      await restored.signer.stop().catch(() => {});
      await restored.db.destroy().catch(() => {});
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${restored.prefix}:*`);
      for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
      redis.disconnect();
      await admin(`drop database if exists ${restored.name} with (force)`);
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
