import type { Clock } from '../../src/domain/clock.js';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { createLogger } from '../../src/logger.js';
import { start, type RunningService } from '../../src/main.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { HOT_WALLET_SLOT } from '../../chains/types.js';
import { startAnvil, type AnvilNode } from './anvil.js';
import { TEST_MASTER_KEY } from './api-harness.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { RATE_LIMITS_OFF_ENV, REDIS_URL } from './env.js';
import type { TokenShape } from './evm-tokens/deploy.js';
import { TEST_MNEMONIC, deployTokens, fund, payFrom, signer, walletAt, type DeployedToken } from './evm-tokens/scenario.js';
import { SignedClient } from './signed-client.js';
import { compiledBuildRequested, startCompiledService } from './compiled-service.js';
import { harnessSigner } from './signer-role.js';

// The whole service as src/main.ts starts it (all roles, one process) over a fresh database, its own Redis prefix and
// an Anvil node standing in for Ethereum (test mode) with a Tether-style USDT and a FiatToken-style USDC. As in
// production (docs/signer.md), the service holds no key: a second `start()` with ROLES=signer, the seed and nothing
// else answers its signatures on a Unix socket and justifies each from the ledger (`signer: 'in-process'` gives the
// service the seed itself instead, for the few tests about that mode).
export interface ServiceHarness {
  t: TestDatabase;
  node: AnvilNode;
  tokens: { USDT: DeployedToken; USDC: DeployedToken };
  service: RunningService;
  base: string;
  env: Record<string, string>;
  newMerchant(name?: string, webhookUrl?: string): Promise<HarnessMerchant>;
  /** Creates a session for `amount` (USD), selects ethereum + token, pays `paid` base units from a fresh payer, waits for paid. */
  paidSession(
    m: HarnessMerchant,
    o: { amount: string; token?: 'USDT' | 'USDC'; paid?: bigint; payerIndex?: number },
  ): Promise<{ id: string; payer: string }>;
  until<T>(f: () => Promise<T | undefined>, ms?: number): Promise<T>;
  close(): Promise<void>;
}

export interface HarnessMerchant {
  id: string;
  client: SignedClient;
  webhookSecret: string;
  account: number;
  hotWallet: string;
}

export async function startServiceHarness(
  o: {
    extraEnv?: Record<string, string>;
    shapes?: { USDT?: TokenShape; USDC?: TokenShape };
    clock?: Clock /** Receives every log line (JSON) instead of stdout. */;
    logOut?: (line: string) => void;
    /** Extra Anvil flags, e.g. `['--hardfork', 'cancun']` for a chain without EIP-7702. */
    anvilArgs?: string[];
    /**
     * 'role' (default): a signer role beside the keyless service, in this process; 'process': that role in a child
     * process of its own, as deployed (benchmarks); 'in-process': the service holds the seed.
     */
    signer?: 'role' | 'process' | 'in-process';
    /** The database to run on (it is destroyed with the harness); default: a fresh one on the shared server. */
    database?: TestDatabase;
  } = {},
): Promise<ServiceHarness> {
  const [t, node] = await Promise.all([
    o.database ?? createTestDatabase(),
    startAnvil({ chainId: 31337, ...(o.anvilArgs ? { extraArgs: o.anvilArgs } : {}) }),
  ]);
  const [USDT, USDC] = (await deployTokens(node, [
    { symbol: 'USDT', shape: o.shapes?.USDT ?? 'tether', decimals: 6 },
    { symbol: 'USDC', shape: o.shapes?.USDC ?? 'fiat', decimals: 6 },
  ])) as [DeployedToken, DeployedToken];
  const prefix = `sp_svc_${randomBytes(4).toString('hex')}`;
  const seedHolder = harnessSigner(TEST_MNEMONIC, {
    ...(o.extraEnv ? { extraEnv: o.extraEnv } : {}),
    inProcess: o.signer === 'in-process',
    separateProcess: o.signer === 'process',
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
    CHAIN_ETHEREUM_TEST_RPC_URL: node.url,
    CHAIN_ETHEREUM_TEST_CHAIN_ID: '31337',
    CHAIN_ETHEREUM_TEST_CONFIRMATIONS: '2',
    CHAIN_ETHEREUM_TEST_POLL_INTERVAL_MS: '150',
    CHAIN_ETHEREUM_TEST_USDT_CONTRACT: USDT.address,
    CHAIN_ETHEREUM_TEST_USDT_DECIMALS: '6',
    CHAIN_ETHEREUM_TEST_USDC_CONTRACT: USDC.address,
    CHAIN_ETHEREUM_TEST_USDC_DECIMALS: '6',
    PAYOUT_POLL_MS: '150',
    PAYOUT_SWEEP_INTERVAL_MS: '2000',
    WEBHOOK_RETRY_SCHEDULE_MS: '100,200,400,800,1600',
    ...RATE_LIMITS_OFF_ENV,
    ...o.extraEnv,
  };
  const config = loadConfig(env);
  // TEST_SERVICE_BUILD=dist: the compiled build in a child process (compiled-service.ts); it takes no injected clock.
  if (compiledBuildRequested() && o.clock) throw new Error('TEST_SERVICE_BUILD=dist runs the compiled service: no injected clock');
  const service = compiledBuildRequested()
    ? await startCompiledService(env, o.logOut)
    : await start(config, env, createLogger(config.LOG_LEVEL, {}, o.logOut), o.clock ? { clock: o.clock } : {});
  // The signer role joins the service (which migrated the database) with the seed alone, from the sources.
  await seedHolder.start(env, o.logOut);
  const base = `http://127.0.0.1:${service.port}`;
  const box = new SecretBox(TEST_MASTER_KEY);
  const adapter = service.adapters.get('ethereum', 'test')!;
  let payerIndex = 10;

  const until = async <T>(f: () => Promise<T | undefined>, ms = 30_000): Promise<T> => {
    const end = Date.now() + ms;
    for (;;) {
      const v = await f();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  return {
    t,
    node,
    tokens: { USDT, USDC },
    service,
    base,
    env,
    until,
    async newMerchant(name = 'Shop', webhookUrl) {
      const m = await createMerchant(t.db, box, { name, webhookUrl: webhookUrl ?? null });
      const { account_index: account } = await t.db
        .selectFrom('merchant_hd_accounts')
        .select('account_index')
        .where('merchant_id', '=', m.merchantId)
        .where('mode', '=', 'test')
        .executeTakeFirstOrThrow();
      const hot = await adapter.deriveHotWallet(signer, account, HOT_WALLET_SLOT.refunds);
      return {
        id: m.merchantId,
        client: new SignedClient(base, { key: m.testKey.key, secret: m.testKey.secret }),
        webhookSecret: m.webhookSecret,
        account,
        hotWallet: hot.address,
      };
    },
    async paidSession(m, p) {
      const token = p.token ?? 'USDT';
      const created = await m.client.post('/api/v1/checkout/sessions/create', {
        amount: p.amount,
        currency: 'USD',
        order_id: `o-${randomBytes(6).toString('hex')}`,
      });
      if (created.status !== 200) throw new Error(`create failed: ${created.text}`);
      const sel = await fetch(`${base}/checkout/sessions/${created.json.id}/select`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ network: 'ethereum', token }),
      });
      const selection = (await sel.json()) as { deposit_address: string; amount_due_base: string };
      const payer = walletAt(p.payerIndex ?? payerIndex++, node.provider);
      const amount = p.paid ?? BigInt(selection.amount_due_base);
      await node.rpc('anvil_setBalance', [payer.address, '0xde0b6b3a7640000']); // 1 ETH for gas
      await fund(token === 'USDT' ? USDT : USDC, payer.address, amount);
      await payFrom(payer, token === 'USDT' ? USDT : USDC, selection.deposit_address, amount);
      await node.mine(2);
      await until(async () =>
        (await m.client.get(`/api/v1/checkout/sessions/${created.json.id}`)).json.payment_status === 'paid' ? true : undefined,
      );
      return { id: created.json.id as string, payer: payer.address.toLowerCase() };
    },
    async close() {
      await service.stop();
      await seedHolder.stop();
      await node.stop();
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}:*`);
      for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
      redis.disconnect();
      await t.destroy();
    },
  };
}
