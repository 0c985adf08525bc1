import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUnits } from 'ethers';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import {
  createBoundSession,
  createMerchant,
  deployTokens,
  eventsFor,
  fund,
  makeAdapter,
  payFrom,
  sessionRow,
  walletAt,
  type DeployedToken,
} from '../support/evm-tokens/scenario.js';
import { NetworkWatcher } from '../../src/watcher/network-watcher.js';
import { expireSession, type ExpiryDeps } from '../../src/ledger/payments/sessions.js';
import { ChainRegistry } from '../../chains/chain-registry.js';
import { hasProvisionalDepositsBefore } from '../../src/ledger/payments/deposits.js';
import type { EvmChainAdapter } from '../../chains/evm/adapter.js';
import { describeAdapterConformance } from '../support/adapter-conformance/scenarios.js';
import { evmFixture } from '../support/adapter-conformance/evm.js';
import { evmNetworkFixture } from '../support/adapter-conformance/evm-network.js';
import { NETWORKS, type NetworkEntry } from '../../chains/registry.js';

// The shared adapter scenarios (test/support/adapter-conformance) against the EVM adapter on Anvil, at the end of this
// file; before them, what only EVM tokens and the expiry guard do (Ethereum stand-in, 3 confirmations).
let tdb: TestDatabase;
let node: AnvilNode;
let usdt: DeployedToken; // Tether-style, 6 decimals
let usdc: DeployedToken; // FiatToken-style, 6 decimals
let adapter: EvmChainAdapter;
let watcher: NetworkWatcher;
let merchant: { id: string; account: number };
const u6 = (s: string) => parseUnits(s, 6);

async function drain() {
  for (let i = 0; i < 50; i++) if ((await watcher.step()).caughtUp) return;
  throw new Error('watcher did not catch up');
}

beforeAll(async () => {
  [tdb, node] = await Promise.all([createTestDatabase(), startAnvil({ chainId: 1 })]);
  [usdt, usdc] = (await deployTokens(node, [
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
    { symbol: 'USDC', shape: 'fiat', decimals: 6 },
  ])) as [DeployedToken, DeployedToken];
  const payer = walletAt(1, node.provider);
  await fund(usdt, payer.address, u6('1000000'));
  await fund(usdc, payer.address, u6('1000000'));
  adapter = makeAdapter(node, [usdt, usdc]);
  await adapter.verifyTokens();
  merchant = await createMerchant(tdb.db);
  watcher = new NetworkWatcher({ db: tdb.db, adapter, pollIntervalMs: 50 });
  await drain();
});

afterAll(async () => {
  await node?.stop();
  await tdb?.destroy();
});

describe('EVM deposits on Anvil (ethereum, 3 confirmations)', () => {
  it('a Tether fee emits a second Transfer to the owner: only the net amount reaches the address and counts', async () => {
    await (usdt.contract.getFunction('setParams') as (a: bigint, b: bigint) => Promise<{ wait(): Promise<unknown> }>)(10n, u6('1')).then(
      (t) => t.wait(),
    );
    try {
      const s = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 10000n, token: 'USDT' });
      await payFrom(walletAt(1, node.provider), usdt, s.address, u6('100'));
      await node.mine(3);
      await drain();
      const row = await sessionRow(tdb.db, s.id);
      expect(row.received_base).toBe(u6('99.9'));
      expect(row.status).toBe('open');
    } finally {
      await (usdt.contract.getFunction('setParams') as (a: bigint, b: bigint) => Promise<{ wait(): Promise<unknown> }>)(0n, 0n).then((t) =>
        t.wait(),
      );
    }
  });

  it('underpaid then expired: payment.expired with the amount received; expiry waits for provisional deposits', async () => {
    const expiry: ExpiryDeps = {
      tokenDecimals: new ChainRegistry([adapter]).tokenDecimals,
      mayStillBePaid: (trx, s) => hasProvisionalDepositsBefore(trx, s.id, s.expires_at),
    };
    const s = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 2000n, token: 'USDC', expiresInSec: 4 });
    await payFrom(walletAt(1, node.provider), usdc, s.address, u6('5'));
    await drain();
    await new Promise((r) => setTimeout(r, 4200));
    // provisional deposit in a block before expires_at: expiry must wait
    expect(await expireSession(tdb.db, s.id, expiry)).toBe('deferred');
    await new Promise((r) => setTimeout(r, 1200)); // block timestamps are whole seconds: the next ones are past expires_at
    await node.mine(3);
    await drain();
    expect(await expireSession(tdb.db, s.id, expiry)).toBe('expired');
    const events = await eventsFor(tdb.db, s.id);
    expect(events.map((e) => e.type)).toEqual(['payment.expired']);
    expect((events[0]!.payload as { data: { object: Record<string, string> } }).data.object).toMatchObject({
      amount: '5.00',
      currency: 'USDC',
    });
  });
});

describeAdapterConformance('EVM on Anvil (ethereum, 3 confirmations)', evmFixture);

// The same scenarios on a rollup fee model and a fast block rate (issue 37), the entries picked from the registry: the
// first op-stack network (Anvil charging the L1 data fee: every payout's reported fee must equal what the hot wallet
// lost), and the first arbitrum-model network with 40 blocks between two polls (test/support/adapter-conformance/evm-network.ts).
const opStack = NETWORKS.find((n) => n.family === 'evm' && n.fees.l1 === 'op-stack') as NetworkEntry;
const fastBlocks = NETWORKS.find((n) => n.family === 'evm' && n.fees.l1 === 'nitro') as NetworkEntry;
describeAdapterConformance(`EVM on Anvil (${opStack.id}: L1 data fee, 3 confirmations)`, evmNetworkFixture(opStack));
describeAdapterConformance(
  `EVM on Anvil (${fastBlocks.id}: 40 blocks between polls, 60 confirmations)`,
  evmNetworkFixture(fastBlocks, { fastBlocks: true }),
);
