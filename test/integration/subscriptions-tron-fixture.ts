import { TronWeb } from 'tronweb';
import { createTronAdapterFactory, type TronChainAdapter } from '../../chains/tron/adapter.js';
import { evmHexToTron, tronBase58, tronToEvmHex } from '../../chains/tron/address.js';
import type { TokenSymbol } from '../../chains/types.js';
import { pollApprovals } from '../../src/subscriptions/approval-poller.js';
import type { ChargeEngineDeps } from '../../src/subscriptions/charge-engine.js';
import type { ManualClock } from '../../src/domain/clock.js';
import { runSchedulerTick } from '../../src/subscriptions/scheduler.js';
import type { SubscriptionSettings } from '../../src/domain/subscription-settings.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import type { ApiHarness } from '../support/api-harness.js';
import { deployTokens, fund, signer, walletAt, type DeployedToken } from '../support/evm-tokens/scenario.js';
import { startFakeJavaTron, type FakeJavaTron } from '../../scripts/devnet/fake-java-tron/server.js';
import type { SignedClient } from '../support/signed-client.js';
import { serveSubscriptionApi } from '../support/subscription-api.js';
import { ChainRegistry } from '../../chains/chain-registry.js';

// The subscription fixture (subscriptions-fixture.ts) on TRON: Anvil (chain id 0x2b6653dc) holds a Tether-style USDT
// and a FiatToken-style USDC and serves the JSON-RPC that stands in for java-tron's; the fake java-tron wallet API
// (scripts/devnet/fake-java-tron) builds, checks and executes TriggerSmartContract transactions on that Anvil. The
// adapter is built as createTronAdapterFactory builds it; the API serves the authorization page; the scheduler runs
// in-process on a manual clock. Customers are TRON keys that sign like TronLink (tronweb's trx.sign).

export const TRX = 1_000_000n;
/** Blocks behind the head a block is solidified (fake) and final (JSON-RPC depth policy): the same line on both APIs. */
const DEPTH = 2;

export interface TronCustomer {
  privateKey: string;
  /** Canonical `41...`. */
  address: string;
  base58: string;
  evm: string;
}

export interface TronSubsFixture {
  node: AnvilNode;
  fake: FakeJavaTron;
  h: ApiHarness;
  tokens: { USDT: DeployedToken; USDC: DeployedToken };
  adapter: TronChainAdapter;
  clock: ManualClock;
  deps: ChargeEngineDeps;
  client: SignedClient;
  merchantId: string;
  /** The merchant's charger and settlement wallets on TRON (canonical). */
  wallets: { charger: string; settlement: string };
  /** Mines blocks until approvals are final, then polls approvals and ticks the scheduler until nothing moves. */
  settle(): Promise<void>;
  /** A TRON key activated with `trx` sun and holding `usdt` base units. */
  customer(index: number, o?: { usdt?: bigint; trx?: bigint }): Promise<TronCustomer>;
  create(body: Record<string, unknown>): Promise<any>;
  /** The page's selection, then the wallet-prepared approve(s), signed with the customer key and broadcast. */
  authorize(subId: string, c: TronCustomer, token?: TokenSymbol): Promise<{ info: any; approvals: any[]; broadcasts: any[] }>;
  events(subId: string): Promise<string[]>;
  close(): Promise<void>;
}

export async function startTronSubsFixture(o: { settings?: Partial<SubscriptionSettings>; start?: Date } = {}): Promise<TronSubsFixture> {
  const node = await startAnvil({ chainId: 0x2b6653dc });
  const [USDT, USDC] = (await deployTokens(node, [
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
    { symbol: 'USDC', shape: 'fiat', decimals: 6 },
  ])) as [DeployedToken, DeployedToken];
  const fake = await startFakeJavaTron(node, { solidifyDepth: DEPTH });
  const adapter = createTronAdapterFactory({ CHAIN_TRON_TEST_FULL_HOST: fake.url })({
    mode: 'test',
    // java-tron's JSON-RPC as the fake serves it (transaction hashes as TRON txIDs), as a deployment points the adapter at.
    rpcUrl: `${fake.url}/jsonrpc`,
    rpcTimeoutMs: 10_000,
    chainId: 0x2b6653dcn,
    tokens: [
      { symbol: 'USDT', address: tronBase58(evmHexToTron(USDT.address)), decimals: 6 },
      { symbol: 'USDC', address: tronBase58(evmHexToTron(USDC.address)), decimals: 6 },
    ],
    confirmation: { kind: 'depth', confirmations: DEPTH + 1 },
    maxBlockRange: 1000,
  });
  await adapter.verifyTokens();
  const adapters = new ChainRegistry([adapter]);
  const api = await serveSubscriptionApi({ adapters, signer, merchantName: 'Subscriptions on TRON', ...o });
  const { h, clock, deps, client, base } = api;
  const m = { merchantId: api.merchantId };
  const charger = await deps.walletResolver.resolve(m.merchantId, 'test', 'tron');
  fake.chain.setTrx(charger.charger, 1_000n * TRX); // energy and bandwidth of every transferFrom, burned from TRX
  // A tronweb instance as TronLink holds one: it signs locally and sends signed transactions to the node.
  const wallet = new TronWeb({ fullHost: fake.url });

  const settle = async () => {
    await node.rpc('anvil_mine', [`0x${(DEPTH + 1).toString(16)}`]); // the customer's approve becomes final
    for (let i = 0; i < 200; i++) {
      await pollApprovals({ ...deps, initialLookback: 10_000n });
      const t = await runSchedulerTick(deps);
      if (t.due === 0 && t.chargesOpen === 0 && t.chargesSettled === 0) return;
      await node.rpc('anvil_mine', ['0x1']); // charges in flight solidify
    }
    throw new Error('scheduler did not settle');
  };

  return {
    node,
    fake,
    h,
    tokens: { USDT, USDC },
    adapter,
    clock,
    deps,
    client,
    merchantId: m.merchantId,
    wallets: { charger: charger.charger, settlement: charger.settlement },
    settle,
    async customer(index, c = {}) {
      const w = walletAt(index, node.provider);
      const address = evmHexToTron(w.address);
      fake.chain.setTrx(address, c.trx ?? 100n * TRX);
      if ((c.usdt ?? 0n) > 0n) await fund(USDT, w.address, c.usdt!);
      return { privateKey: w.privateKey.slice(2), address, base58: tronBase58(address), evm: tronToEvmHex(address) };
    },
    create: api.create,
    async authorize(subId, c, token = 'USDT') {
      const select = async () => {
        const sel = await fetch(`${base}/subscribe/${subId}/select`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ network: 'tron', token, address: c.base58 }),
        });
        const info = (await sel.json()) as any;
        if (sel.status !== 200) throw new Error(`select: ${JSON.stringify(info)}`);
        return info;
      };
      const approvals: any[] = [];
      const broadcasts: any[] = [];
      const send = async (tx: any) => {
        // What the page hands TronLink: trx.sign, then trx.sendRawTransaction (POST /wallet/broadcasttransaction).
        approvals.push(tx);
        const signed = await wallet.trx.sign(tx, c.privateKey);
        const sent = (await wallet.trx.sendRawTransaction(signed as any)) as any;
        broadcasts.push(sent);
        if (sent.result !== true) throw new Error(`broadcast: ${JSON.stringify(sent)}`);
      };
      // As the page does: with reset_first, /select prepares only approve(0); once it landed, a second /select
      // prepares approve(allowance) (Tether's approve would refuse it while the old allowance stands).
      const info = await select();
      let last = info;
      if (info.reset_first) {
        await send(info.wallet_transactions[0].transaction);
        await node.rpc('anvil_mine', ['0x1']);
        last = await select();
      }
      if (!last.authorized) await send(last.wallet_transactions[last.wallet_transactions.length - 1].transaction);
      return { info, approvals, broadcasts };
    },
    events: api.events,
    async close() {
      try {
        await h.close();
      } finally {
        await fake.close();
        await node.stop();
      }
    },
  };
}

export const PERIOD_EVENTS = ['invoice.created', 'invoice.paid', 'subscription.active'];
