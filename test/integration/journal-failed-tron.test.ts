import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainHarnessMerchant } from '../support/chain-service-harness.js';
import { startTronServiceHarness, type TronServiceHarness } from '../support/tron-service-harness.js';
import { acknowledgeUnexplained, listUnexplained } from '../../src/ledger/journal/unexplained.js';
import { registerWallets } from '../../src/ledger/journal/entries.js';
import { reconcileChain } from '../../src/reconcile/reconcile.js';
import { expectBurntFeeOnce, openingBalances, untilTrxSolidified } from '../support/failed-fee.js';

// The fee of a failed TRON transaction is burnt and journaled (docs/journal.md, "Failed transactions"): a refund whose
// TriggerSmartContract runs OUT_OF_ENERGY on the (fake) java-tron is mined with a failed receipt that still burns TRX
// (`fee` = energy_fee + net_fee in gettransactioninfobyid; the account's balance drops by it). The worker that reads
// the failed outcome journals the fee and is killed before it fails the refund; the next worker fails it (the spec's
// failed payout: status failed, the reason, the mined transaction's hash, refund.failed) and the fee stays journaled
// once. Reconcile then reads the hot wallet's TRX exactly as the journal says.

let h: TronServiceHarness;
let shop: ChainHarnessMerchant;
beforeAll(async () => {
  // In-process: API and watcher only. The refund is paid by child workers (src/main.ts, ROLES=worker).
  h = await startTronServiceHarness({ extraEnv: { ROLES: 'api,watcher', PAYOUT_LOCK_MS: '1500', PAYOUT_SWEEP_INTERVAL_MS: '1000' } });
  shop = await h.newMerchant('Tron burnt fee');
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const TRX = 100_000_000n; // 100 TRX in sun

describe('fees of failed TRON transactions', () => {
  it('a refund that runs OUT_OF_ENERGY: the fee is journaled once across a worker crash, the refund fails, TRX reconciles', async () => {
    const hot = shop.hotWallet;
    const ours = `address:tron:test:${hot}`;
    // The operator registers the hot wallet, then funds it: TRX (no log shows it) and USDT (an unexplained top-up).
    await registerWallets(h.t.db, [{ network: 'tron', mode: 'test', address: hot, merchantId: shop.id, role: 'refunds' }]);
    await h.fundHotWallet(shop, { trxSun: TRX, usdt: 20_000_000n, usdc: 0n });
    const [topUp] = await h.until(async () => {
      const u = await listUnexplained(h.t.db, { network: 'tron', mode: 'test' });
      return u.length > 0 ? u : undefined;
    }, 60_000);
    expect(topUp!.legs).toEqual(expect.arrayContaining([{ account: ours, asset: 'tron:test:USDT', amount: 20_000_000n }]));
    expect(await acknowledgeUnexplained(h.t.db, topUp!.entryId, 'treasury top-up')).toBe(true);
    const s = await h.paidSession(shop, { amount: '2.00', token: 'USDT' });

    // Before the refund: the hot wallet's opening balance (its TRX, once solidified) is booked and nothing differs.
    await untilTrxSolidified(h.fake, hot, TRX);
    const before = await h.until(async () => {
      const r = await reconcileChain(h.t.db, h.adapter);
      return r.height !== null && r.differences.length === 0 && r.addresses >= 2 ? r : undefined;
    }, 60_000);
    expect(before.unexplainedNative).toEqual([]);
    const opening = await openingBalances(h.t.db, ours);
    expect(opening).toEqual([{ asset: 'tron:test:native', amount: TRX }]);
    const sunBefore = h.fake.chain.accounts.get(hot)!.balanceSun;
    expect(sunBefore).toBe(TRX);

    h.fake.forceNextResult('OUT_OF_ENERGY'); // the refund's TriggerSmartContract
    const created = await h.createRefund(shop, { session_id: s.id, refund_id: 'tron-burnt-fee', amount: 200, currency: 'USDT' });
    expect(created.status).toBe(201);
    const doomed = h.runWorker('outbound:after_burnt_fee');
    expect((await doomed.exited).signal).toBe('SIGKILL');

    // Killed after journaling the fee, before failing the refund.
    const [attempt] = await h.t.db.selectFrom('payout_attempts').select(['tx_hash']).where('refund_id', '=', created.json.id).execute();
    const mined = h.fake.chain.txs.get(attempt!.tx_hash)!;
    expect(mined.contractRet).toBe('OUT_OF_ENERGY');
    expect(mined.info.result).toBe('FAILED');
    const fee = BigInt(mined.info.fee as number);
    const receipt = mined.info.receipt as { energy_fee?: number; net_fee?: number };
    expect(fee).toBe(BigInt(receipt.energy_fee ?? 0) + BigInt(receipt.net_fee ?? 0));
    expect(fee).toBeGreaterThan(0n);
    expect(h.fake.chain.accounts.get(hot)!.balanceSun).toBe(sunBefore - fee); // the TRX is burnt
    const mid = await h.t.db.selectFrom('refunds').select('status').where('id', '=', created.json.id).executeTakeFirstOrThrow();
    expect(mid.status).toBe('processing');
    const burnt = {
      kind: 'refund_payout',
      object: { type: 'refund', id: created.json.id },
      network: 'tron',
      txHash: attempt!.tx_hash,
      merchantId: shop.id,
      blockHeight: mined.blockNumber,
      sender: hot,
      fee,
    } as const;
    await expectBurntFeeOnce(h.t.db, burnt);

    const survivor = h.runWorker();
    const done = await h.settled(shop, created.json.refund_id, 120_000).finally(async () => {
      survivor.kill();
      await survivor.exited;
    });
    expect(done.status).toBe('failed');
    expect(done.failure_reason).toMatch(/OUT_OF_ENERGY/);
    expect(done.transaction_hash).toBe(attempt!.tx_hash);
    expect((await h.refundEvents(created.json.id)).map((e) => e.type)).toEqual(['refund.failed']);
    expect(await h.transfers('USDT', hot, s.payer)).toEqual([]);

    await expectBurntFeeOnce(h.t.db, burnt); // still once

    // The hot wallet's TRX (and everything else) reconciles to the sun: no native drift is booked.
    const after = await h.until(async () => {
      const r = await reconcileChain(h.t.db, h.adapter);
      return r.height !== null && r.height >= mined.blockNumber ? r : undefined;
    }, 60_000);
    expect(after.differences).toEqual([]);
    expect(after.unexplainedNative).toEqual([]);
    const native = after.summary.find((x) => x.asset === 'native' && x.merchantId === shop.id)!;
    expect(native).toMatchObject({ expected: sunBefore - fee, chain: sunBefore - fee, difference: 0n });
  }, 300_000);
});
