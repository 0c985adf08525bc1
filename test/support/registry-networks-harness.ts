import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { NetworkEntry } from '../../chains/registry.js';
import { HOT_WALLET_SLOT, type NetworkId, type TokenSymbol } from '../../chains/types.js';
import { loadConfig } from '../../src/config.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { createLogger } from '../../src/logger.js';
import { start, type RunningService } from '../../src/main.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { TEST_MASTER_KEY } from './api-harness.js';
import { backgroundMiner } from './chain-watch.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { RATE_LIMITS_OFF_ENV, REDIS_URL } from './env.js';
import type { TokenShape } from './evm-tokens/deploy.js';
import { TEST_MNEMONIC, deployTokens, signer, type DeployedToken } from './evm-tokens/scenario.js';
import { type NetworkAnvil, startNetworkAnvil } from './network-anvil.js';
import { harnessSigner } from './signer-role.js';
import { SignedClient } from './signed-client.js';

// One service (src/main.ts `start`, every role in one process, keyless, beside a signer role as in production) over a
// fresh database and its own Redis prefix, with any EVM networks of the registry configured in test mode, each on its
// own Anvil started for its registry entry (test/support/network-anvil.ts: the L1 data fee on op-stack networks, fast
// blocks on arbitrum-like ones) with its own tokens: the symbols the issuers publish on that network (entry.live.tokens),
// 6 decimals, USDT Tether-style and USDC FiatToken-style. Finality is the registry's default (`safe` or `finalized`:
// Anvil's safe block trails the head by 32, its finalized by 64); a node that does not mine by itself (automine) gets
// a background miner so those tags move. Names no network: everything comes from the entries given
// (test/unit/network-registry-structure.test.ts).

export interface RegistryNetworksHarness {
  t: TestDatabase;
  service: RunningService;
  base: string;
  env: Record<string, string>;
  entries: readonly NetworkEntry[];
  nodes: Record<NetworkId, NetworkAnvil>;
  tokens: Record<NetworkId, Partial<Record<TokenSymbol, DeployedToken>>>;
  newMerchant(name: string, webhookUrl: string): Promise<RegistryMerchant>;
  until<T>(f: () => Promise<T | undefined>, ms?: number): Promise<T>;
  close(): Promise<void>;
}

export interface RegistryMerchant {
  id: string;
  client: SignedClient;
  webhookSecret: string;
  account: number;
  /** The merchant's refund hot wallet per network (canonical address). */
  hot: Record<NetworkId, string>;
}

const SHAPES: Record<TokenSymbol, TokenShape> = { USDT: 'tether', USDC: 'fiat' };
/** The harness's test tokens' decimals (the registry's test tokens on these networks all have 6). */
export const HARNESS_TOKEN_DECIMALS = 6;

export async function startRegistryNetworksHarness(
  entries: readonly NetworkEntry[],
  o: { extraEnv?: Record<string, string>; minerMs?: number } = {},
): Promise<RegistryNetworksHarness> {
  for (const e of entries) if (e.family !== 'evm') throw new Error(`${e.id}: the registry-networks harness runs EVM networks`);
  const [t, ...started] = await Promise.all([createTestDatabase(), ...entries.map((e) => startNetworkAnvil(e))]);
  const nodes = {} as Record<NetworkId, NetworkAnvil>;
  entries.forEach((e, i) => (nodes[e.id as NetworkId] = started[i]!));
  const miners: Array<{ stop(): void }> = [];
  const stopNodes = async () => {
    for (const m of miners) m.stop();
    await Promise.all(Object.values(nodes).map((n) => n.stop()));
  };
  const tokens = {} as RegistryNetworksHarness['tokens'];
  const seedHolder = harnessSigner(TEST_MNEMONIC, o.extraEnv ? { extraEnv: o.extraEnv } : {});
  const prefix = `sp_reg_${randomBytes(4).toString('hex')}`;
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
    SWEEP_TICK_MS: '300',
    WEBHOOK_RETRY_SCHEDULE_MS: '100,200,400,800,1600',
    ...RATE_LIMITS_OFF_ENV,
  };
  let service: RunningService;
  try {
    await Promise.all(
      entries.map(async (e) => {
        const id = e.id as NetworkId;
        const symbols = [...new Set(e.live.tokens.map((x) => x.symbol))];
        const deployed = await deployTokens(
          nodes[id],
          symbols.map((symbol) => ({ symbol, shape: SHAPES[symbol], decimals: HARNESS_TOKEN_DECIMALS })),
        );
        tokens[id] = Object.fromEntries(deployed.map((d) => [d.symbol, d]));
        const p = `CHAIN_${e.id.toUpperCase()}_TEST_`;
        env[`${p}RPC_URL`] = nodes[id].url;
        env[`${p}CHAIN_ID`] = String(e.test.chainId);
        env[`${p}POLL_INTERVAL_MS`] = '150';
        for (const d of deployed) {
          env[`${p}${d.symbol}_CONTRACT`] = d.address;
          env[`${p}${d.symbol}_DECIMALS`] = String(d.decimals);
        }
        if (await nodes[id].rpc<boolean>('anvil_getAutomine')) miners.push(backgroundMiner(nodes[id], o.minerMs ?? 100));
      }),
    );
    Object.assign(env, o.extraEnv ?? {});
    const config = loadConfig(env);
    service = await start(config, env, createLogger(config.LOG_LEVEL));
    await seedHolder.start(env);
  } catch (e) {
    await seedHolder.stop();
    await stopNodes();
    await t.destroy();
    throw e;
  }
  const base = `http://127.0.0.1:${service.port}`;
  const box = new SecretBox(TEST_MASTER_KEY);
  const until = async <T>(f: () => Promise<T | undefined>, ms = 60_000): Promise<T> => {
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
    service,
    base,
    env,
    entries,
    nodes,
    tokens,
    until,
    async newMerchant(name, webhookUrl) {
      const m = await createMerchant(t.db, box, { name, webhookUrl });
      const { account_index: account } = await t.db
        .selectFrom('merchant_hd_accounts')
        .select('account_index')
        .where('merchant_id', '=', m.merchantId)
        .where('mode', '=', 'test')
        .executeTakeFirstOrThrow();
      const hot = {} as Record<NetworkId, string>;
      for (const e of entries) {
        const adapter = service.adapters.require(e.id as NetworkId, 'test');
        hot[e.id as NetworkId] = adapter.normalizeAddress(
          (await adapter.deriveHotWallet(signer, account, HOT_WALLET_SLOT.refunds)).address,
        )!;
      }
      return {
        id: m.merchantId,
        client: new SignedClient(base, { key: m.testKey.key, secret: m.testKey.secret }),
        webhookSecret: m.webhookSecret,
        account,
        hot,
      };
    },
    async close() {
      try {
        await service.stop();
        await seedHolder.stop();
      } finally {
        const redis = new Redis(REDIS_URL);
        const keys = await redis.keys(`${prefix}:*`);
        for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
        redis.disconnect();
        await stopNodes();
        await t.destroy();
      }
    },
  };
}
