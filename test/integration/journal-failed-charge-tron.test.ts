import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollApprovals } from '../../src/subscriptions/approval-poller.js';
import { runSchedulerTick } from '../../src/subscriptions/scheduler.js';
import { NetworkWatcher } from '../../src/watcher/network-watcher.js';
import { reconcileAfterWatcher } from '../support/reconcile-covering.js';
import { expectBurntFeeOnce, journalBalance, openingBalances, stopOnceAtBurntFee, untilTrxSolidified } from '../support/failed-fee.js';
import { plan } from './subscriptions-fixture.js';
import { TRX, startTronSubsFixture, type TronSubsFixture } from './subscriptions-tron-fixture.js';

// The fee of a failed TRON subscription charge is burnt and journaled (docs/journal.md "Failed transactions"): the
// charger's transferFrom runs OUT_OF_ENERGY on the fake java-tron and is mined with a failed receipt that still burns
// the charger's TRX (`fee` = energy_fee + net_fee). The scheduler step that reads the failed outcome journals the fee
// and is interrupted at outbound:after_burnt_fee (in-process: the scheduler runs in the test); the next tick fails the
// charge and the fee stays journaled once, on the invoice. Reconcile then reads the charger's TRX exactly as the
// journal says.

let f: TronSubsFixture;
let watcher: NetworkWatcher;
beforeAll(async () => {
  f = await startTronSubsFixture({ start: new Date('2027-01-31T10:00:00Z') });
  watcher = new NetworkWatcher({ db: f.h.t.db, adapter: f.adapter, pollIntervalMs: 50 });
}, 120_000);
afterAll(async () => f?.close());

/** Lets what was mined become final, the watcher commit it, then reconciles TRON. */
const reconciled = () => reconcileAfterWatcher(f.h.t.db, f.adapter, watcher, () => f.node.rpc('anvil_mine', ['0x4']));

describe('fees of failed TRON charges', () => {
  it('a charge that runs OUT_OF_ENERGY: the fee is journaled once on the invoice across an interrupted step, the charge fails, TRX reconciles', async () => {
    const charger = f.wallets.charger;
    const ours = `address:tron:test:${charger}`;
    // Before any charge: the charger's opening balance (the TRX it was funded with, once solidified) is booked, nothing
    // differs.
    await untilTrxSolidified(f.fake, charger, 1_000n * TRX, () => f.node.rpc('anvil_mine', ['0x1']));
    const opening = await reconciled();
    expect(opening.height).not.toBeNull();
    expect(opening.differences).toEqual([]);
    expect(await openingBalances(f.h.t.db, ours)).toEqual([{ asset: 'tron:test:native', amount: 1_000n * TRX }]);
    const sunBefore = f.fake.chain.account(charger)!.balanceSun;

    const customer = await f.customer(41, { usdt: 100_000_000n });
    const sub = await f.create({ ...plan(), customer: 'cus_tron_burnt' });
    await f.authorize(sub.id, customer);
    f.fake.forceNextResult('OUT_OF_ENERGY'); // the charge's transferFrom

    // The scheduler runs until its step stops at outbound:after_burnt_fee.
    const interrupted = stopOnceAtBurntFee(f.deps);
    await f.node.rpc('anvil_mine', ['0x3']); // the approve is final
    for (let i = 0; i < 100 && !interrupted.stopped(); i++) {
      await pollApprovals({ ...f.deps, initialLookback: 10_000n });
      await runSchedulerTick(interrupted.deps);
      await f.node.rpc('anvil_mine', ['0x1']);
    }
    expect(interrupted.stopped()).toBe(true);
    const chargeRow = () =>
      f.h.t.db.selectFrom('subscription_charges').selectAll().where('subscription_id', '=', sub.id).executeTakeFirstOrThrow();
    const mid = await chargeRow();
    expect(mid.state).toBe('broadcast'); // journaled, not failed yet

    // On chain: mined with a failed receipt; the TRX it burnt is what the charger lost, nothing moved.
    const mined = f.fake.chain.txs.get(mid.tx_hash!)!;
    expect(mined.raw?.owner).toBe(charger);
    expect(mined.contractRet).toBe('OUT_OF_ENERGY');
    expect(mined.info.result).toBe('FAILED');
    const fee = BigInt(mined.info.fee as number);
    const receipt = mined.info.receipt as { energy_fee?: number; net_fee?: number };
    expect(fee).toBe(BigInt(receipt.energy_fee ?? 0) + BigInt(receipt.net_fee ?? 0));
    expect(fee).toBeGreaterThan(0n);
    expect(f.fake.chain.account(charger)!.balanceSun).toBe(sunBefore - fee);
    const burnt = {
      kind: 'charge',
      object: { type: 'invoice', id: mid.invoice_id },
      network: 'tron',
      txHash: mid.tx_hash!,
      merchantId: f.merchantId,
      blockHeight: mined.blockNumber,
      sender: charger,
      fee,
    } as const;
    await expectBurntFeeOnce(f.h.t.db, burnt);

    // The next ticks fail the charge; the fee stays journaled once.
    await f.settle();
    const done = await chargeRow();
    expect(done.state).toBe('failed');
    expect(done.failure_reason).toMatch(/OUT_OF_ENERGY/);
    expect(done.tx_hash).toBe(mid.tx_hash);
    await expectBurntFeeOnce(f.h.t.db, burnt);

    // The charger's TRX reconciles to the sun: its journal balance is the chain's, nothing absorbed, nothing differs.
    const after = await reconciled();
    expect(after.height!).toBeGreaterThanOrEqual(mined.blockNumber);
    expect(after.differences).toEqual([]);
    expect(after.unexplainedNative).toEqual([]);
    expect(await journalBalance(f.h.t.db, ours, 'tron:test:native')).toBe(sunBefore - fee);
    expect(await openingBalances(f.h.t.db, ours)).toEqual([{ asset: 'tron:test:native', amount: 1_000n * TRX }]);
  }, 240_000);
});
