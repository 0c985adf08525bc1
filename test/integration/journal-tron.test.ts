import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainHarnessMerchant } from '../support/chain-service-harness.js';
import { startTronServiceHarness, type TronServiceHarness } from '../support/tron-service-harness.js';
import { reconcileChain } from '../../src/reconcile/reconcile.js';
import { watcherFinalHeight } from '../../src/ledger/journal/reconcile-runs.js';

// Reconcile on TRON (docs/journal.md): deposits journaled by the watcher (the EVM log scanner over TRON's JSON-RPC),
// balances read per account through the solidity API of the fake java-tron at the solidified block, zero difference
// after payments.

describe('journal and reconcile on TRON', () => {
  let h: TronServiceHarness;
  let shop: ChainHarnessMerchant;
  beforeAll(async () => {
    h = await startTronServiceHarness();
    shop = await h.newMerchant('Tron journal');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('journals deposits (exact and overpaid) and reconciles every deposit address to the base unit', async () => {
    const a = await h.paidSession(shop, { amount: '2.50', token: 'USDT' });
    const b = await h.paidSession(shop, { amount: '1.00', token: 'USDC', paid: 1_750_000n });
    const legs = await h.t.db
      .selectFrom('journal_legs as l')
      .innerJoin('journal_entries as e', 'e.id', 'l.entry_id')
      .select(['l.account', 'l.amount', 'e.block_height'])
      .where('e.session_id', 'in', [a.id, b.id])
      .where('l.account', '!=', 'external')
      .orderBy('l.amount')
      .execute();
    // Accounts use the canonical address form (hex 41…), as the deposits table does.
    const canon = (x: string) => h.adapter.normalizeAddress(x)!;
    expect(legs.map(({ account, amount }) => ({ account, amount }))).toEqual([
      { account: `address:tron:test:${canon(b.depositAddress)}`, amount: 1_750_000n },
      { account: `address:tron:test:${canon(a.depositAddress)}`, amount: 2_500_000n },
    ]);
    // The watcher credits at its final height (head − 3 + 1), one block above the solidified block reconcile reads
    // (head − 3): a run right after the payment may compare at a height below the last deposit, where both the ledger
    // and the chain still say 0. Compare at a height that holds both deposits.
    const lastDeposit = legs.reduce((m, l) => (l.block_height > m ? l.block_height : m), 0n);
    const report = await h.until(async () => {
      const r = await reconcileChain(h.t.db, h.adapter);
      return r.height !== null && r.height >= lastDeposit && r.addresses === 2 ? r : undefined;
    }, 30_000);
    expect(report.differences.filter((d) => d.failing)).toEqual([]);
    expect(report.balances).toBe(2 * 3);
    // One request per balance through the solidity API, and the solidified block before and after them; with blocks
    // every 150 ms the block may move during the read (read again): a run during which none moved reads each balance
    // once, at one exact height.
    const still = await h.until(async () => {
      const r = await reconcileChain(h.t.db, h.adapter);
      // A run during which no block moved: 6 balance requests and the solidified block before and after them.
      return r.height !== null && r.stateHeights?.retries === 0 && r.rpcCalls === 6 + 2 ? r : undefined;
    }, 30_000);
    expect(still.stateHeights).toEqual({ lowest: still.height, highest: still.height, retries: 0, uncompared: 0 });
    expect(still.differences).toEqual([]);
    expect(still.rpcCalls).toBe(6 + 2);
    const usdc = report.summary.find((x) => x.asset === 'USDC' && x.merchantId === shop.id)!;
    expect(usdc).toMatchObject({ expected: 1_750_000n, chain: 1_750_000n, difference: 0n, addresses: 2 });
  });

  it("reconciles a chain that stopped producing blocks, at the solidified block below the watcher's final height", async () => {
    // CONFIRMATIONS equal to the fake's solidification depth puts the service's final height (head − 3 + 1) one block
    // above the solidified one (head − 3). Once the watcher has committed that height on a stopped chain, the solidity
    // API never reaches it: reconcile used to wait for it for a minute and throw ("the final state stayed below height").
    h.stopMiner();
    const chain = { network: 'tron', mode: 'test' } as const;
    const head = await h.adapter.getHead();
    expect(head.final).toBe(head.latest - 3n + 1n);
    await h.until(async () => ((await watcherFinalHeight(h.t.db, chain)) === head.final ? true : undefined), 30_000);
    const r = await reconcileChain(h.t.db, h.adapter);
    expect(r.skipped).toBeUndefined();
    expect(r.height).toBe(head.latest - 3n);
    expect(r.stateHeights).toEqual({ lowest: head.latest - 3n, highest: head.latest - 3n, retries: 0, uncompared: 0 });
    expect(r.balances).toBe(2 * 3);
    expect(r.differences).toEqual([]);
  });
});
