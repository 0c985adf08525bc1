import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { createLogger } from '../../src/logger.js';
import { start, type RunningService } from '../../src/main.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { HOT_WALLET_SLOT, type ChainAdapter } from '../../chains/types.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';
import { TEST_MASTER_KEY } from './api-harness.js';
import { harnessSigner } from './signer-role.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { RATE_LIMITS_OFF_ENV, REDIS_URL } from './env.js';
import { SignedClient } from './signed-client.js';

// The whole service (src/main.ts `start`) over a fresh database and its own Redis prefix, configured for one chain by
// the caller's environment (Solana on the LiteSVM fake, TRON on the fake java-tron over Anvil). service-harness.ts is
// the Ethereum variant; this one knows nothing of the chain beyond the adapter registered as `<network>:test`.
export const STANDARD_TEST_MNEMONIC = 'test test test test test test test test test test test junk';
export const testSigner = new MnemonicSigner(STANDARD_TEST_MNEMONIC);

export interface ChainHarnessMerchant {
  id: string;
  client: SignedClient;
  account: number;
  /** Canonical address of the merchant's refund hot wallet on the harness's chain. */
  hotWallet: string;
}

export interface ChainServiceHarness {
  t: TestDatabase;
  service: RunningService;
  adapter: ChainAdapter;
  base: string;
  env: Record<string, string>;
  newMerchant(name?: string): Promise<ChainHarnessMerchant>;
  /** Creates a session and selects `network` + token on the public checkout endpoint. */
  selectSession(
    m: ChainHarnessMerchant,
    o: { amount: string; token: 'USDT' | 'USDC' },
  ): Promise<{ id: string; deposit_address: string; amount_due_base: string; raw: Record<string, unknown> }>;
  waitPaid(m: ChainHarnessMerchant, sessionId: string, ms?: number): Promise<Record<string, any>>;
  createRefund(m: ChainHarnessMerchant, body: Record<string, unknown>): Promise<{ status: number; json: any }>;
  settled(m: ChainHarnessMerchant, refundId: string, ms?: number): Promise<Record<string, any>>;
  refundEvents(refundInternalId: string): Promise<Array<{ type: string; payload: unknown }>>;
  /** src/main.ts as a child process with ROLES=worker (and optional SP_FAILPOINTS), on the harness's environment. */
  runWorker(failpoint?: string): { exited: Promise<{ code: number | null; signal: string | null }>; kill(): void };
  until<T>(f: () => Promise<T | undefined>, ms?: number): Promise<T>;
  close(): Promise<void>;
}

export async function startChainServiceHarness(o: {
  network: 'solana' | 'tron';
  chainEnv: Record<string, string>;
  extraEnv?: Record<string, string>;
  /** Default: a signer role beside the keyless service; 'in-process': the service holds the seed. */
  signer?: 'role' | 'in-process';
}): Promise<ChainServiceHarness> {
  const t = await createTestDatabase();
  const prefix = `sp_svc_${randomBytes(4).toString('hex')}`;
  // As in production, the service holds no key: a signer role beside it (test/support/signer-role.ts).
  const seedHolder = harnessSigner(STANDARD_TEST_MNEMONIC, {
    ...(o.extraEnv ? { extraEnv: o.extraEnv } : {}),
    inProcess: o.signer === 'in-process',
  });
  const env: Record<string, string> = {
    MASTER_KEY: TEST_MASTER_KEY,
    DATABASE_URL: t.url,
    REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.HARNESS_LOG ?? 'silent',
    ...seedHolder.keyEnv,
    PAYOUT_POLL_MS: '150',
    PAYOUT_SWEEP_INTERVAL_MS: '2000',
    WEBHOOK_RETRY_SCHEDULE_MS: '100,200,400,800,1600',
    ...RATE_LIMITS_OFF_ENV,
    ...o.chainEnv,
    ...o.extraEnv,
  };
  let service: RunningService;
  try {
    const config = loadConfig(env);
    service = await start(config, env, createLogger(config.LOG_LEVEL));
    await seedHolder.start(env);
  } catch (e) {
    await seedHolder.stop();
    await t.destroy();
    throw e;
  }
  const base = `http://127.0.0.1:${service.port}`;
  const box = new SecretBox(TEST_MASTER_KEY);
  const adapter = service.adapters.get(o.network, 'test');
  if (!adapter) throw new Error(`${o.network}:test is not configured`);
  const children = new Set<{ kill(): void; exited: Promise<unknown> }>();

  const until = async <T>(f: () => Promise<T | undefined>, ms = 30_000): Promise<T> => {
    const end = Date.now() + ms;
    for (;;) {
      const v = await f();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  let n = 0;

  const h: ChainServiceHarness = {
    t,
    service,
    adapter,
    base,
    env,
    until,
    async newMerchant(name = 'Shop') {
      const m = await createMerchant(t.db, box, { name, webhookUrl: null });
      const { account_index: account } = await t.db
        .selectFrom('merchant_hd_accounts')
        .select('account_index')
        .where('merchant_id', '=', m.merchantId)
        .where('mode', '=', 'test')
        .executeTakeFirstOrThrow();
      const hot = await adapter.deriveHotWallet(testSigner, account, HOT_WALLET_SLOT.refunds);
      return {
        id: m.merchantId,
        client: new SignedClient(base, { key: m.testKey.key, secret: m.testKey.secret }),
        account,
        hotWallet: hot.address,
      };
    },
    async selectSession(m, s) {
      const created = await m.client.post('/api/v1/checkout/sessions/create', {
        amount: s.amount,
        currency: 'USD',
        order_id: `o-${randomBytes(6).toString('hex')}`,
      });
      if (created.status !== 200) throw new Error(`create failed: ${created.text}`);
      const sel = await fetch(`${base}/checkout/sessions/${created.json.id}/select`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ network: o.network, token: s.token }),
      });
      const raw = (await sel.json()) as Record<string, unknown>;
      if (sel.status !== 200) throw new Error(`select failed: ${sel.status} ${JSON.stringify(raw)}`);
      return {
        id: created.json.id as string,
        deposit_address: raw.deposit_address as string,
        amount_due_base: raw.amount_due_base as string,
        raw,
      };
    },
    async waitPaid(m, sessionId, ms = 30_000) {
      return until(async () => {
        const r = await m.client.get(`/api/v1/checkout/sessions/${sessionId}`);
        return r.json.payment_status === 'paid' ? r.json : undefined;
      }, ms);
    },
    createRefund: (m, body) => m.client.post('/api/v1/refunds/create', { refund_id: `rf-${Date.now()}-${n++}`, ...body }),
    async settled(m, refundId, ms = 60_000) {
      return until(async () => {
        const r = await m.client.get(`/api/v1/refunds/${refundId}`);
        return r.json.status === 'completed' || r.json.status === 'failed' ? r.json : undefined;
      }, ms);
    },
    refundEvents: (id) => t.db.selectFrom('outbox_events').select(['type', 'payload']).where('aggregate_id', '=', id).execute(),
    runWorker(failpoint) {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        env: { ...process.env, ...env, ROLES: 'worker', LOG_LEVEL: process.env.HARNESS_LOG ?? 'silent', SP_FAILPOINTS: failpoint ?? '' },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const handle = {
        exited: new Promise<{ code: number | null; signal: string | null }>((resolve) =>
          child.on('exit', (code, signal) => resolve({ code, signal })),
        ),
        kill: () => void child.kill('SIGTERM'),
      };
      children.add(handle);
      void handle.exited.then(() => children.delete(handle));
      return handle;
    },
    async close() {
      for (const c of children) {
        c.kill();
        await c.exited;
      }
      await service.stop();
      await seedHolder.stop();
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}:*`);
      for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
      redis.disconnect();
      await t.destroy();
    },
  };
  return h;
}
