import { getAccount, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollApprovals } from '../../src/subscriptions/approval-poller.js';
import { runSchedulerTick } from '../../src/subscriptions/scheduler.js';
import { NetworkWatcher } from '../../src/watcher/network-watcher.js';
import { reconcileAfterWatcher } from '../support/reconcile-covering.js';
import { expectBurntFeeOnce, journalBalance, landFailedOnSolana, openingBalances, stopOnceAtBurntFee } from '../support/failed-fee.js';
import { plan } from './subscriptions-fixture.js';
import { startSolanaSubsFixture, type SolanaSubsFixture } from './subscriptions-solana-fixture.js';

// The fee of a failed Solana subscription charge is burnt and journaled (docs/journal.md "Failed transactions"): the
// charger's delegated TransferChecked passes the node's preflight and is held; before it lands the issuer freezes the
// customer's token account (the approval stays), so it lands with its error (SPL Token AccountFrozen) and the charger,
// its fee payer, pays the fee. The scheduler step that reads the failed outcome journals the fee and is interrupted at
// outbound:after_burnt_fee (in-process: the scheduler runs in the test); the next tick fails the charge and the fee
// stays journaled once, on the invoice. Reconcile then reads the charger's SOL exactly as the journal says.

let f: SolanaSubsFixture;
let watcher: NetworkWatcher;
beforeAll(async () => {
  f = await startSolanaSubsFixture({ start: new Date('2027-01-31T10:00:00Z') });
  watcher = new NetworkWatcher({ db: f.h.t.db, adapter: f.adapter, pollIntervalMs: 50 });
}, 120_000);
afterAll(async () => f?.close());

/** Lets what landed finalize, the watcher commit it, then reconciles Solana. */
const reconciled = () => reconcileAfterWatcher(f.h.t.db, f.adapter, watcher, () => f.rpc.validator.advanceSlots(33));

describe('fees of failed Solana charges', () => {
  it('a charge that lands failed (customer token account frozen): the fee is journaled once on the invoice across an interrupted step, the charge fails, SOL reconciles', async () => {
    const w = await f.deps.walletResolver.resolve(f.merchantId, 'test', 'solana');
    const charger = w.charger;
    const ours = `address:solana:test:${charger}`;
    // Before any charge: the charger's opening balance (the SOL it was funded with) is booked, nothing differs.
    const opening = await reconciled();
    expect(opening.differences).toEqual([]);
    const lamports0 = BigInt(await f.conn.getBalance(new PublicKey(charger), 'finalized'));
    expect(await openingBalances(f.h.t.db, ours)).toEqual([{ asset: 'solana:test:native', amount: lamports0 }]);

    const customer = f.customer(100_000_000n);
    const owner = customer.publicKey.toBase58();
    const sub = await f.create(plan({}, 1));
    const info = await f.select(sub.id, owner);
    await f.approve(customer, info.spender, BigInt(info.allowance_base));
    f.rpc.validator.advanceSlots(33); // the approval is final
    const customerAta = getAssociatedTokenAddressSync(new PublicKey(f.mints.USDT), customer.publicKey, true);
    const approved = await getAccount(f.conn, customerAta, 'confirmed');
    expect(approved.delegate?.toBase58()).toBe(charger);

    const chargeRow = () =>
      f.h.t.db.selectFrom('subscription_charges').selectAll().where('subscription_id', '=', sub.id).executeTakeFirst();
    const interrupted = stopOnceAtBurntFee(f.deps);
    const txHash = await landFailedOnSolana(
      f.rpc.validator,
      async () => {
        for (let i = 0; i < 100; i++) {
          await pollApprovals({ ...f.deps, authorizationCheckMs: 0 });
          await runSchedulerTick(interrupted.deps);
          const c = await chargeRow();
          if (c?.state === 'broadcast') return c.tx_hash!;
        }
        throw new Error('the charge was never broadcast');
      },
      () =>
        f.rpc.validator.setTokenAccount({
          mint: f.mints.USDT,
          owner,
          amount: approved.amount,
          delegate: charger,
          delegatedAmount: approved.delegatedAmount,
          frozen: true,
        }),
    );
    // The scheduler runs until its step stops at outbound:after_burnt_fee.
    for (let i = 0; i < 100 && !interrupted.stopped(); i++) {
      f.rpc.validator.advanceSlots(33);
      await runSchedulerTick(interrupted.deps);
    }
    expect(interrupted.stopped()).toBe(true);
    const mid = (await chargeRow())!;
    expect(mid.state).toBe('broadcast'); // journaled, not failed yet
    expect(mid.tx_hash).toBe(txHash);

    // On chain: landed with its error, the fee paid by the charger, nothing else moved.
    const tx = (await f.conn.getTransaction(txHash, { commitment: 'finalized', maxSupportedTransactionVersion: 0 }))!;
    expect(tx.meta?.err).toMatchObject({ InstructionError: [expect.any(Number), { Custom: 17 }] }); // AccountFrozen
    const fee = BigInt(tx.meta!.fee);
    expect(fee).toBeGreaterThan(0n);
    expect(tx.transaction.message.staticAccountKeys[0]!.toBase58()).toBe(charger);
    expect(BigInt(tx.meta!.preBalances[0]!) - BigInt(tx.meta!.postBalances[0]!)).toBe(fee);
    expect(await f.tokenBalance(f.mints.USDT, w.settlement)).toBe(0n);
    const burnt = {
      kind: 'charge',
      object: { type: 'invoice', id: mid.invoice_id },
      network: 'solana',
      txHash,
      merchantId: f.merchantId,
      blockHeight: BigInt(tx.slot),
      sender: charger,
      fee,
    } as const;
    await expectBurntFeeOnce(f.h.t.db, burnt);

    // The next ticks fail the charge; the fee stays journaled once.
    await f.settle();
    const done = (await chargeRow())!;
    expect(done.state).toBe('failed');
    expect(done.tx_hash).toBe(txHash);
    await expectBurntFeeOnce(f.h.t.db, burnt);

    // The charger's SOL reconciles to the lamport: its journal balance is the chain's, nothing absorbed, nothing differs.
    const after = await reconciled();
    expect(after.height!).toBeGreaterThanOrEqual(BigInt(tx.slot));
    expect(after.differences).toEqual([]);
    expect(after.unexplainedNative).toEqual([]);
    const lamports = BigInt(await f.conn.getBalance(new PublicKey(charger), 'finalized'));
    expect(lamports).toBe(lamports0 - fee);
    expect(await journalBalance(f.h.t.db, ours, 'solana:test:native')).toBe(lamports);
    expect(await openingBalances(f.h.t.db, ours)).toEqual([{ asset: 'solana:test:native', amount: lamports0 }]);
  }, 240_000);
});
