import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainHarnessMerchant } from '../support/chain-service-harness.js';
import { startTronServiceHarness, tronEvm, type TronServiceHarness } from '../support/tron-service-harness.js';
import { fund, payFrom, walletAt } from '../support/evm-tokens/scenario.js';
import { readingAfter } from '../support/final-state-during-read.js';
import { reconcileChain } from '../../src/reconcile/reconcile.js';
import { openRegisteredWallets } from '../../src/reconcile/openings.js';
import { journalBalancesAt } from '../../src/ledger/journal/balances.js';
import { registerWallets } from '../../src/ledger/journal/entries.js';
import { watcherFinalHeight } from '../../src/ledger/journal/reconcile-runs.js';
import { isFinalStateReader } from '../../chains/types.js';
import { openingsWithHeights } from '../support/failed-fee.js';

// Reconcile on TRON at the exact height of the solidified state it reads (docs/journal.md "Reconcile"): balances from
// the solidity API bracketed by the solidified block's height, the books at that height.

const TRX = 1_000_000n;

describe('reconcile on TRON reads the solidified state at a known height', () => {
  let h: TronServiceHarness;
  let shop: ChainHarnessMerchant;
  const chain = { network: 'tron', mode: 'test' as const };
  beforeAll(async () => {
    h = await startTronServiceHarness();
    shop = await h.newMerchant('Tron final state');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('a deposit finalized during the read, after the pinned height, is no difference', async () => {
    const a = await h.paidSession(shop, { amount: '2.00', token: 'USDT' });
    const canonical = h.adapter.normalizeAddress(a.depositAddress)!;
    await h.until(async () => ((await reconcileChain(h.t.db, h.adapter)).differences.length === 0 ? true : undefined), 60_000);
    if (!isFinalStateReader(h.adapter)) throw new Error('the TRON adapter reads final state');
    let pinned = -1n;
    let landed = -1n;
    const adapter = readingAfter(h.adapter, async () => {
      // The run pinned its height at or below the watcher's committed final height, which holds the paid 2.00 (the read's
      // floor is only the previous run's height, possibly below the deposit: not the height to judge the books at).
      pinned = (await watcherFinalHeight(h.t.db, chain))!;
      const payer = walletAt(90, h.node.provider);
      await h.node.rpc('anvil_setBalance', [payer.address, '0xde0b6b3a7640000']);
      await fund(h.tokens.USDT, payer.address, 750_000n);
      const hash = await payFrom(payer, h.tokens.USDT, tronEvm(a.depositAddress), 750_000n);
      landed = BigInt((await h.node.provider.getTransactionReceipt(hash))!.blockNumber);
      // Finalized: solidified, and the watcher's committed final height past it (journaled).
      await h.until(async () => ((await h.fake.chain.solidHeight()) >= landed ? true : undefined), 30_000);
      await h.until(async () => (((await watcherFinalHeight(h.t.db, chain)) ?? -1n) >= landed ? true : undefined), 30_000);
    });
    const report = await reconcileChain(h.t.db, adapter);
    expect(landed).toBeGreaterThan(pinned);
    // Read "now" against the books at the pinned height, the late deposit would be a difference of 0.75 USDT:
    const atPinned = await journalBalancesAt(h.t.db, chain, pinned);
    expect(atPinned.find((j) => j.account === `address:tron:test:${canonical}` && j.asset === 'tron:test:USDT')?.balance).toBe(2_000_000n);
    expect(report.height).toBeGreaterThanOrEqual(landed);
    expect(report.stateHeights).toMatchObject({ highest: report.height });
    expect(report.differences).toEqual([]);
    const usdt = report.summary.find((s) => s.asset === 'USDT' && s.merchantId === shop.id)!;
    expect(usdt).toMatchObject({ expected: 2_750_000n, chain: 2_750_000n, difference: 0n });
    // Requests: one per balance, the solidified block before and after (more when the block moved during a chunk).
    expect(report.rpcCalls).toBeGreaterThanOrEqual(report.balances + 2);
  });

  it('a native movement between registration and the first reconcile is an unexplained movement, not opening balance', async () => {
    const hot = shop.hotWallet;
    h.fake.chain.setTrx(hot, 100n * TRX);
    // Funded before registration: wait until the solidified state holds it.
    const reader = h.adapter;
    if (!isFinalStateReader(reader)) throw new Error('the TRON adapter reads final state');
    await h.until(async () => {
      const r = await reader.finalStateBalances(0n, [{ address: hot, asset: 'native' }]);
      return r.balances[0] === 100n * TRX ? true : undefined;
    }, 30_000);
    await registerWallets(h.t.db, [{ ...chain, address: hot, merchantId: shop.id, role: 'refunds' }]);
    // What `payouts wallets` does after registering: the opening from the solidified state at or above registration.
    expect(await openRegisteredWallets(h.t.db, h.adapter, 60_000)).toEqual([hot]);
    const opening = await openingsWithHeights(h.t.db, hot, `address:tron:test:${hot}`);
    expect(opening.map((o) => [o.asset, o.amount])).toEqual([['tron:test:native', 100n * TRX]]);
    expect(BigInt(opening[0]!.block_height)).toBeGreaterThanOrEqual(BigInt(opening[0]!.registered_height!));
    // The operator (or anyone) tops the wallet up by 25 TRX before any reconcile ran.
    h.fake.chain.setTrx(hot, 125n * TRX);
    const report = await h.until(async () => {
      const r = await reconcileChain(h.t.db, h.adapter);
      return (r.unexplainedNative ?? []).length > 0 ? r : undefined;
    }, 60_000);
    expect(report.unexplainedNative).toEqual([expect.objectContaining({ address: hot, amount: 25n * TRX })]);
    expect(report.differences).toEqual([
      expect.objectContaining({
        address: hot,
        asset: 'native',
        journal: 125n * TRX,
        unexplained: 25n * TRX,
        chain: 125n * TRX,
        difference: -25n * TRX,
      }),
    ]);
  });
});
