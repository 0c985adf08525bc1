import { Contract, type Wallet } from 'ethers';
import type { ChainAdapter } from '../../chains/types.js';
import { pollApprovals } from '../../src/subscriptions/approval-poller.js';
import type { ChargeEngineDeps } from '../../src/subscriptions/charge-engine.js';
import type { ManualClock } from '../../src/domain/clock.js';
import { runSchedulerTick } from '../../src/subscriptions/scheduler.js';
import type { SubscriptionSettings } from '../../src/domain/subscription-settings.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import type { ApiHarness } from '../support/api-harness.js';
import { deployTokens, fund, makeAdapter, signer, walletAt, type DeployedToken } from '../support/evm-tokens/scenario.js';
import type { SignedClient } from '../support/signed-client.js';
import { serveSubscriptionApi } from '../support/subscription-api.js';
import { ChainRegistry } from '../../chains/chain-registry.js';

// Shared fixture of the subscription tests: Anvil with a Tether-style USDT and a FiatToken-style USDC, the API on a
// real server with the authorization page, and the scheduler driven in-process with a manual clock.

export interface SubsFixture {
  node: AnvilNode;
  h: ApiHarness;
  tokens: { USDT: DeployedToken; USDC: DeployedToken };
  adapter: ChainAdapter;
  clock: ManualClock;
  deps: ChargeEngineDeps;
  client: SignedClient;
  merchantId: string;
  /** Approvals, due actions and charges until nothing moves. */
  settle(): Promise<void>;
  customer(index: number, usdt?: bigint): Promise<Wallet>;
  create(body: Record<string, unknown>): Promise<any>;
  authorize(subId: string, wallet: Wallet, token?: 'USDT' | 'USDC'): Promise<any>;
  events(subId: string): Promise<string[]>;
  close(): Promise<void>;
}

export const plan = (over: Record<string, unknown> = {}, quantity = 1) => ({
  items: [
    {
      price_data: {
        price_id: 'price_m',
        currency: 'USD',
        product: 'Monthly',
        unit_amount: 1000,
        recurring: { interval: 'month' },
        ...over,
      },
      quantity,
    },
  ],
  customer: 'cus_life',
});

export async function startSubsFixture(o: { settings?: Partial<SubscriptionSettings>; start?: Date } = {}): Promise<SubsFixture> {
  const node = await startAnvil({ chainId: 31337 });
  const [USDT, USDC] = (await deployTokens(node, [
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
    { symbol: 'USDC', shape: 'fiat', decimals: 6 },
  ])) as [DeployedToken, DeployedToken];
  const adapter = makeAdapter(node, [USDT, USDC], { confirmation: { kind: 'depth', confirmations: 1 } });
  const adapters = new ChainRegistry([{ adapter, chainId: 31337n }]);
  const api = await serveSubscriptionApi({ adapters, signer, merchantName: 'Subscriptions shop', ...o });
  const { h, clock, deps, client, base } = api;
  const m = { merchantId: api.merchantId };
  const w = await deps.walletResolver.wallets(m.merchantId, 'test', 'ethereum');
  await node.rpc('anvil_setBalance', [w.charger, '0x56bc75e2d63100000']); // 100 ETH for charge gas
  await node.rpc('anvil_setBalance', [w.settlement, '0xde0b6b3a7640000']); // 1 ETH for refund gas

  const settle = async () => {
    for (let i = 0; i < 200; i++) {
      await pollApprovals({ ...deps, initialLookback: 10_000n });
      const t = await runSchedulerTick(deps);
      if (t.due === 0 && t.chargesOpen === 0 && t.chargesSettled === 0) return;
    }
    throw new Error('scheduler did not settle');
  };
  return {
    node,
    h,
    tokens: { USDT, USDC },
    adapter,
    clock,
    deps,
    client,
    merchantId: m.merchantId,
    settle,
    async customer(index, usdt = 0n) {
      const wallet = walletAt(index, node.provider);
      await node.rpc('anvil_setBalance', [wallet.address, '0xde0b6b3a7640000']);
      if (usdt > 0n) await fund(USDT, wallet.address, usdt);
      return wallet;
    },
    create: api.create,
    async authorize(subId, wallet, token = 'USDT') {
      const sel = await fetch(`${base}/subscribe/${subId}/select`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ network: 'ethereum', token, address: wallet.address }),
      });
      const info = (await sel.json()) as any;
      if (sel.status !== 200) throw new Error(`select: ${JSON.stringify(info)}`);
      const c = new Contract(token === 'USDT' ? USDT.address : USDC.address, ['function approve(address spender, uint256 value)'], wallet);
      const approve = c.getFunction('approve') as (s: string, v: bigint) => Promise<{ wait(): Promise<unknown> }>;
      if (info.reset_first) await (await approve(info.spender, 0n)).wait();
      await (await approve(info.spender, BigInt(info.allowance_base))).wait();
      return info;
    },
    events: api.events,
    async close() {
      await h.close();
      await node.stop();
    },
  };
}

export const PERIOD_EVENTS = ['invoice.created', 'invoice.paid', 'subscription.active'];
