import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcileExitCode } from '../../src/cli/reconcile.js';
import { listUnexplained } from '../../src/ledger/journal/unexplained.js';
import { incompleteness } from '../../src/reconcile/reconcile.js';
import { backgroundMiner } from '../support/chain-watch.js';
import { fundedRefundWallet } from '../support/funded-refund-wallet.js';
import { reconcileOnceCovering } from '../support/reconcile-covering.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';

// A native balance on an address with a transaction of ours in flight is not compared (docs/journal.md "Native
// balances"): its landed fee may not be journaled yet, so the run neither fails on it (exit 3) nor books it as
// unexplained; it names it as not compared (exit 4). Once the transaction settled, the next run compares the address
// again: the outside funding (before and during the flight; reconcile books native drift, no log shows it) is booked
// as unexplained and fails the run as before.

let h: ServiceHarness;
let shop: HarnessMerchant;
let miner: { stop(): void };
const GAS = 10n ** 19n;
const OUTSIDE = 123_456_789n;

beforeAll(async () => {
  h = await startServiceHarness();
  shop = await h.newMerchant('InFlight');
  miner = backgroundMiner(h.node);
}, 120_000);
afterAll(async () => {
  miner?.stop();
  await h?.close();
});

const balanceHex = (v: bigint) => `0x${v.toString(16)}`;

describe('reconcile and a transaction of ours in flight', () => {
  it('leaves the sender’s native balance uncompared (exit 4, nothing booked) until it settles, then compares it (exit 3)', async () => {
    const hot = await fundedRefundWallet(h, shop, GAS, 20_000_000n);
    const adapter = h.service.adapters.get('ethereum', 'test')!;
    const s = await h.paidSession(shop, { amount: '2.00', token: 'USDT' });

    // The refund's transaction waits in the node's pool behind a nonce the chain has not reached (the stored next nonce
    // one ahead of the wallet's, as when an earlier transaction of the wallet is still to land) while blocks are mined
    // and the wallet's ETH changes from outside.
    expect(await h.node.provider.getTransactionCount(shop.hotWallet)).toBe(0);
    await h.t.db.insertInto('hot_wallet_nonces').values({ network: 'ethereum', mode: 'test', address: hot, next_nonce: '1' }).execute();
    const created = await shop.client.post('/api/v1/refunds/create', {
      refund_id: `inflight-${Date.now()}`,
      session_id: s.id,
      amount: 200,
      currency: 'USDT',
    });
    expect(created.status).toBe(201);
    const refundId = created.json.id as string;
    const attempt = await h.until(async () => {
      const a = await h.t.db.selectFrom('payout_attempts').selectAll().where('refund_id', '=', refundId).execute();
      return a.find((x) => x.state === 'broadcast');
    }, 30_000);
    expect(attempt.nonce).toBe(1n);
    await h.node.rpc('anvil_setBalance', [shop.hotWallet, balanceHex(GAS + OUTSIDE)]);
    const changedAt = BigInt(await h.node.provider.getBlockNumber()) + 1n;
    const during = await reconcileOnceCovering(h.t.db, adapter, changedAt, h.until);
    expect(await h.node.provider.getTransactionReceipt(attempt.tx_hash)).toBeNull();
    const stillInFlight = await h.t.db.selectFrom('payout_attempts').select('state').where('refund_id', '=', refundId).execute();
    expect(stillInFlight.some((a) => a.state === 'signed' || a.state === 'broadcast')).toBe(true);
    expect(during.differences).toEqual([
      expect.objectContaining({ address: hot, asset: 'native', expected: 0n, chain: GAS + OUTSIDE, failing: false, inFlight: true }),
    ]);
    expect(incompleteness(during)).toEqual([expect.stringContaining(`${hot} native: a transaction of ours from it is in flight`)]);
    expect(reconcileExitCode({ chains: [during], ok: during.differences.every((d) => !d.failing) })).toBe(4);
    expect(during.unexplainedNative).toEqual([]);
    expect(await listUnexplained(h.t.db, { network: 'ethereum', mode: 'test' })).toEqual([]);
    const stored = await h.t.db.selectFrom('reconcile_differences').selectAll().where('run_id', '=', during.runId!).execute();
    expect(stored).toEqual([]);

    // The wallet's nonce 0 lands (sent from outside, as the earlier transaction the refund waited behind): the refund
    // lands and settles; the next run compares the wallet and books the outside funding, less that transaction's fee.
    await h.node.rpc('anvil_impersonateAccount', [shop.hotWallet]);
    const gapHash = (await h.node.rpc('eth_sendTransaction', [
      { from: shop.hotWallet, to: shop.hotWallet, value: '0x0', nonce: '0x0' },
    ])) as string;
    await h.node.rpc('anvil_stopImpersonatingAccount', [shop.hotWallet]);
    const gap = await h.until(async () => (await h.node.provider.getTransactionReceipt(gapHash)) ?? undefined);
    const outside = GAS + OUTSIDE - gap.fee;
    const refund = await h.until(async () => {
      const r = await h.t.db.selectFrom('refunds').selectAll().where('id', '=', refundId).executeTakeFirstOrThrow();
      return r.status === 'completed' || r.status === 'failed' ? r : undefined;
    }, 60_000);
    expect(refund.status).toBe('completed');
    const receipt = (await h.node.provider.getTransactionReceipt(refund.transaction_hash!))!;
    const after = await reconcileOnceCovering(h.t.db, adapter, BigInt(receipt.blockNumber), h.until);
    expect(after.differences).toEqual([
      expect.objectContaining({ address: hot, asset: 'native', difference: -outside, unexplained: outside, failing: true }),
    ]);
    expect(after.differences[0]!.inFlight).toBeUndefined();
    expect(incompleteness(after)).toEqual([]);
    expect(reconcileExitCode({ chains: [after], ok: after.differences.every((d) => !d.failing) })).toBe(3);
    expect(after.unexplainedNative).toEqual([expect.objectContaining({ address: hot, amount: outside })]);
  }, 180_000);
});
