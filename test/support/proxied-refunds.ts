import type { ChainRegistry } from '../../chains/chain-registry.js';
import { loadWatcherSettings } from '../../src/watcher/config.js';
import { createVerifiedAdapters } from '../../src/watcher/start.js';
import { fund } from './evm-tokens/scenario.js';
import { startFaultProxy, type FaultProxy } from './rpc-fault-proxy.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from './service-harness.js';

/** The native coin the merchant's refunds hot wallet gets (10 ETH). */
export const REFUND_WALLET_GAS = 10n ** 19n;

export interface ProxiedRefunds {
  h: ServiceHarness;
  shop: HarnessMerchant;
  /** A JSON-RPC proxy in front of the harness's Anvil, playing a node that refuses or fails on command. */
  proxy: FaultProxy;
  /** Adapters reaching Ethereum through `proxy`, for driving the payout engine step by step. */
  adapters: ChainRegistry;
  close(): Promise<void>;
}

/**
 * The service in-process with the API and watcher only (no worker: a test drives the payout engine itself), a
 * merchant whose refunds hot wallet holds REFUND_WALLET_GAS and 1,000 USDT, and adapters that talk to the chain
 * through a fault proxy.
 */
export async function startProxiedRefunds(merchantName: string): Promise<ProxiedRefunds> {
  const h = await startServiceHarness({ extraEnv: { ROLES: 'api,watcher' } });
  const shop = await h.newMerchant(merchantName);
  await h.node.rpc('anvil_setBalance', [shop.hotWallet, `0x${REFUND_WALLET_GAS.toString(16)}`]);
  await fund(h.tokens.USDT, shop.hotWallet, 1_000_000_000n);
  const proxy = await startFaultProxy({ upstream: h.node.url });
  const env = { ...h.env, CHAIN_ETHEREUM_TEST_RPC_URL: proxy.url };
  const adapters = await createVerifiedAdapters(loadWatcherSettings(env), env);
  return {
    h,
    shop,
    proxy,
    adapters,
    close: async () => {
      await proxy.close();
      await h.close();
    },
  };
}

/** A refund's payout attempts, oldest first. */
export const attemptsOf = (h: ServiceHarness, refundId: string) =>
  h.t.db.selectFrom('payout_attempts').selectAll().where('refund_id', '=', refundId).orderBy('id').execute();
