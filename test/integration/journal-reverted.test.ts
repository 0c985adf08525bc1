import { Contract } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backgroundMiner } from '../support/chain-watch.js';
import { walletAt, type DeployedToken } from '../support/evm-tokens/scenario.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';
import { acknowledgeUnexplained, listUnexplained } from '../../src/ledger/journal/unexplained.js';
import { fundedRefundWallet } from '../support/funded-refund-wallet.js';
import { reconcileChain } from '../../src/reconcile/reconcile.js';
import { reconcileOnceCovering } from '../support/reconcile-covering.js';

// The fee of a reverted transaction is burnt and journaled (docs/journal.md, "Failed transactions"): a refund whose
// token the issuer pauses while the payout is in the mempool is mined with receipt status 0; the outcome carries its
// fee, the journal books it (hot wallet → fees:ethereum, linked to the refund), and reconcile reads the hot wallet's
// ETH as the journal says: only the outside gas funding is left as a native difference.

let h: ServiceHarness;
let shop: HarnessMerchant;
let miner: { stop(): void };
const GAS = 10n ** 19n;
const GWEI = 1_000_000_000n;
type Send = (...args: unknown[]) => Promise<{ wait(): Promise<unknown> }>;

beforeAll(async () => {
  h = await startServiceHarness();
  shop = await h.newMerchant('Reverted');
  miner = backgroundMiner(h.node);
}, 120_000);
afterAll(async () => {
  miner?.stop();
  await h?.close();
});

async function asIssuer(token: DeployedToken, signature: string, o: Record<string, bigint> = {}): Promise<void> {
  const c = new Contract(token.address, [`function ${signature}`], walletAt(0, h.node.provider));
  await (await (c.getFunction(signature.slice(0, signature.indexOf('('))) as Send)(o)).wait();
}

describe('fees of reverted transactions', () => {
  it('a refund reverted on chain: its burnt fee is journaled against the hot wallet and reconcile reads it', async () => {
    const hot = await fundedRefundWallet(h, shop, GAS, 20_000_000n);
    const s = await h.paidSession(shop, { amount: '2.00', token: 'USDT' });

    // Mining held: the payout waits in the mempool, the issuer pauses the token first in the same block.
    miner.stop();
    await h.node.rpc('evm_setAutomine', [false]);
    let refundId: string;
    try {
      const c = await shop.client.post('/api/v1/refunds/create', {
        refund_id: `rv-${Date.now()}`,
        session_id: s.id,
        amount: 200,
        currency: 'USDT',
      });
      expect(c.status).toBe(201);
      refundId = c.json.id;
      await h.until(async () => {
        const a = await h.t.db.selectFrom('payout_attempts').select('state').where('refund_id', '=', refundId).execute();
        return a.some((x) => x.state === 'broadcast') ? true : undefined;
      }, 30_000);
      const c2 = new Contract(h.tokens.USDT.address, ['function pause()'], walletAt(0, h.node.provider));
      await (c2.getFunction('pause') as Send)({ maxPriorityFeePerGas: 50n * GWEI, maxFeePerGas: 500n * GWEI });
      await h.node.rpc('evm_mine', []);
    } finally {
      await h.node.rpc('evm_setAutomine', [true]);
      miner = backgroundMiner(h.node);
    }
    try {
      const refund = await h.until(async () => {
        const r = await h.t.db.selectFrom('refunds').selectAll().where('id', '=', refundId).executeTakeFirstOrThrow();
        return r.status === 'failed' || r.status === 'completed' ? r : undefined;
      }, 60_000);
      expect(refund.status).toBe('failed');
      const receipt = (await h.node.provider.getTransactionReceipt(refund.transaction_hash!))!;
      expect(receipt.status).toBe(0);
      expect(receipt.fee).toBeGreaterThan(0n);

      const entry = await h.t.db
        .selectFrom('journal_entries')
        .selectAll()
        .where('object_type', '=', 'refund')
        .where('object_id', '=', refund.id)
        .executeTakeFirstOrThrow();
      expect(entry).toMatchObject({
        kind: 'refund_payout',
        leg_key: 'reverted',
        tx_hash: refund.transaction_hash,
        merchant_id: shop.id,
        block_height: BigInt(receipt.blockNumber),
      });
      const legs = await h.t.db
        .selectFrom('journal_legs')
        .select(['account', 'asset', 'amount'])
        .where('entry_id', '=', entry.id)
        .orderBy('amount')
        .execute();
      expect(legs).toEqual([
        { account: `address:ethereum:test:${hot}`, asset: 'ethereum:test:native', amount: -receipt.fee },
        { account: 'fees:ethereum', asset: 'ethereum:test:native', amount: receipt.fee },
      ]);

      const adapter = h.service.adapters.get('ethereum', 'test')!;
      const report = await reconcileOnceCovering(h.t.db, adapter, BigInt(receipt.blockNumber), h.until);
      expect(report.height).toBeGreaterThanOrEqual(BigInt(receipt.blockNumber));
      expect(report.differences.filter((d) => d.asset !== 'native')).toEqual([]);
      // The hot wallet's ETH: books = −(the reverted payout's fee); chain = the outside top-up − that fee. The top-up
      // (after registration, a plain value change no log shows) is booked as an unexplained native movement: it fails
      // the run until an operator acknowledges it.
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
      expect(report.differences.every((d) => d.failing)).toBe(true);
      const native = (await listUnexplained(h.t.db, { network: 'ethereum', mode: 'test' })).filter((u) =>
        u.legs.some((l) => l.asset === 'ethereum:test:native'),
      );
      expect(
        native
          .flatMap((u) => u.legs)
          .filter((l) => l.account === `address:ethereum:test:${hot}`)
          .reduce((t, l) => t + l.amount, 0n),
      ).toBe(GAS);
      for (const u of native) {
        expect(u.txHash).toMatch(/^native-balance:/);
        expect(await acknowledgeUnexplained(h.t.db, u.entryId, 'gas top-up from the treasury')).toBe(true);
      }
      const after = await reconcileChain(h.t.db, adapter);
      expect(after.differences).toEqual([]);
    } finally {
      await asIssuer(h.tokens.USDT, 'unpause()');
    }
  });
});
