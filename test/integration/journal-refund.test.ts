import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backgroundMiner } from '../support/chain-watch.js';
import { fund } from '../support/evm-tokens/scenario.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';
import { acknowledgeUnexplained, listUnexplained } from '../../src/ledger/journal/unexplained.js';
import { registerWallets } from '../../src/ledger/journal/entries.js';
import { reconcileChain } from '../../src/reconcile/reconcile.js';
import { reconcileOnceCovering } from '../support/reconcile-covering.js';
import { fundAfterRegistration } from '../support/funded-refund-wallet.js';

// The journal beside the whole service on Anvil (docs/journal.md): a registered hot wallet's top-up is journaled as
// unexplained and acknowledged by the operator; a paid (overpaid) session and a refund payout are journaled, the
// payout with the network fee burnt from the hot wallet's native balance; the refund's own transfer out of the watched
// hot wallet is never unexplained; reconcile finds no token difference, and the only native one is the gas top-up
// (unexplained until acknowledged).

let h: ServiceHarness;
let shop: HarnessMerchant;
let miner: { stop(): void };
const GAS = 10n ** 19n;

beforeAll(async () => {
  h = await startServiceHarness({ extraEnv: { PAYOUT_STUCK_AFTER_MS: '1500' } });
  shop = await h.newMerchant('Journaled');
  miner = backgroundMiner(h.node);
});
afterAll(async () => {
  miner?.stop();
  await h?.close();
});

describe('journal of a refund payout', () => {
  it('journals top-up, deposit and payout with its fee; reconcile has no token difference', async () => {
    const hot = shop.hotWallet.toLowerCase();
    await registerWallets(h.t.db, [{ network: 'ethereum', mode: 'test', address: hot, merchantId: shop.id, role: 'refunds' }]);
    await fundAfterRegistration(h.node);
    await h.node.rpc('anvil_setBalance', [shop.hotWallet, `0x${GAS.toString(16)}`]);
    await fund(h.tokens.USDT, shop.hotWallet, 50_000_000n);

    // The top-up is seen by the watcher as a movement the service did not make: flagged until acknowledged.
    const [topUp] = await h.until(async () => {
      const u = await listUnexplained(h.t.db, { network: 'ethereum', mode: 'test' });
      return u.length > 0 ? u : undefined;
    });
    expect(topUp!.legs).toEqual(
      expect.arrayContaining([{ account: `address:ethereum:test:${hot}`, asset: 'ethereum:test:USDT', amount: 50_000_000n }]),
    );
    expect(await acknowledgeUnexplained(h.t.db, topUp!.entryId, 'treasury top-up')).toBe(true);

    const s = await h.paidSession(shop, { amount: '10.00', token: 'USDT', paid: 12_000_000n });
    const created = await shop.client.post('/api/v1/refunds/create', {
      refund_id: `rf-${Date.now()}`,
      session_id: s.id,
      amount: 1000,
      currency: 'USDT',
    });
    expect(created.status).toBe(201);
    const refund = await h.until(async () => {
      const r = await h.t.db.selectFrom('refunds').selectAll().where('refund_id', '=', created.json.refund_id).executeTakeFirst();
      return r?.status === 'completed' ? r : undefined;
    }, 60_000);

    const entry = await h.t.db
      .selectFrom('journal_entries')
      .selectAll()
      .where('object_type', '=', 'refund')
      .where('object_id', '=', refund.id)
      .executeTakeFirstOrThrow();
    expect(entry).toMatchObject({ kind: 'refund_payout', tx_hash: refund.transaction_hash, merchant_id: shop.id, session_id: s.id });
    const receipt = (await h.node.provider.getTransactionReceipt(refund.transaction_hash!))!;
    expect(entry.block_height).toBe(BigInt(receipt.blockNumber));
    const legs = await h.t.db.selectFrom('journal_legs').select(['account', 'asset', 'amount']).where('entry_id', '=', entry.id).execute();
    expect(legs).toEqual(
      expect.arrayContaining([
        { account: `address:ethereum:test:${hot}`, asset: 'ethereum:test:USDT', amount: -10_000_000n },
        { account: 'external', asset: 'ethereum:test:USDT', amount: 10_000_000n },
        { account: `address:ethereum:test:${hot}`, asset: 'ethereum:test:native', amount: -receipt.fee },
        { account: 'fees:ethereum', asset: 'ethereum:test:native', amount: receipt.fee },
      ]),
    );
    expect(legs).toHaveLength(4);
    // The payout's own Transfer out of the watched hot wallet is ours: nothing new is unexplained.
    expect(await listUnexplained(h.t.db, { network: 'ethereum', mode: 'test' })).toEqual([]);

    const adapter = h.service.adapters.get('ethereum', 'test')!;
    const report = await reconcileOnceCovering(h.t.db, adapter, BigInt(receipt.blockNumber), h.until);
    expect(report.height).toBeGreaterThanOrEqual(BigInt(receipt.blockNumber));
    expect(report.differences.filter((d) => d.asset !== 'native')).toEqual([]);
    const usdt = report.summary.find((x) => x.merchantId === shop.id && x.asset === 'USDT')!;
    // Hot wallet 50 - 10, deposit address 12.
    expect(usdt).toMatchObject({ expected: 52_000_000n, chain: 52_000_000n, difference: 0n });
    // Native: the journal holds exactly the fee burnt; the gas the test set after registering the wallet is what the log
    // watcher cannot see: booked as an unexplained native movement, failing until acknowledged (docs/journal.md).
    expect(report.differences).toEqual([
      expect.objectContaining({
        address: hot,
        asset: 'native',
        expected: -receipt.fee,
        chain: GAS - receipt.fee,
        difference: -GAS,
        failing: true,
      }),
    ]);
    for (const u of await listUnexplained(h.t.db, { network: 'ethereum', mode: 'test' }))
      expect(await acknowledgeUnexplained(h.t.db, u.entryId, 'gas top-up')).toBe(true);
    expect((await reconcileChain(h.t.db, adapter)).differences).toEqual([]);
  });
});
