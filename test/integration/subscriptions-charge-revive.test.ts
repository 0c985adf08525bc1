import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chargeOutboundStore } from '../../src/ledger/subscriptions/charge-outbound-store.js';
import { runSchedulerTick } from '../../src/subscriptions/scheduler.js';
import { transfersFrom } from '../support/chain-watch.js';
import { plan, startSubsFixture, type SubsFixture } from './subscriptions-fixture.js';

// A charge signed again with the bytes of one of its dropped attempts (the same hash: the same nonce and fees) revives
// that attempt in the charge store, one row and one transaction, instead of violating the (charge_id, tx_hash) unique
// key and leaving the charge stuck. Charges keep refused nonces (docs/outbound.md), so the engine does not reach this
// today; the store is proven here on a real charge in flight, and the revived bytes then land once.

let f: SubsFixture;
const T0 = new Date('2027-10-01T00:00:00Z');
const DAY = 86_400_000;
beforeAll(async () => {
  f = await startSubsFixture({ start: T0 });
}, 120_000);
afterAll(async () => f?.close());

describe('the charge store', () => {
  it('revives a dropped attempt signed again with identical bytes, and the charge is paid once', async () => {
    const customer = await f.customer(320, 100_000_000n);
    const s = await f.create({ ...plan({ recurring: { interval: 'day' } }), customer: 'cus_revive' });
    await f.authorize(s.id, customer);
    await f.settle();
    const before = await transfersFrom(f.node, f.tokens.USDT.address, customer.address);
    expect(before).toHaveLength(1);

    const store = chargeOutboundStore(f.h.t.db);
    const open = () =>
      f.h.t.db
        .selectFrom('subscription_charges')
        .selectAll()
        .where('subscription_id', '=', s.id)
        .where('state', 'in', ['pending', 'signed', 'broadcast'])
        .executeTakeFirstOrThrow();
    const attemptsOf = (chargeId: bigint) =>
      f.h.t.db.selectFrom('subscription_charge_attempts').selectAll().where('charge_id', '=', chargeId).orderBy('id').execute();

    await f.node.rpc('evm_setAutomine', [false]);
    try {
      f.clock.set(new Date(T0.getTime() + DAY + 60_000));
      await runSchedulerTick(f.deps); // the renewal's charge: signed, broadcast, held in the mempool
      const charge = await open();
      expect(charge.state).toBe('broadcast');
      const [first] = await attemptsOf(charge.id);
      // The node forgets it; the attempt is dropped and the charge reopened, as the engine does for dead bytes.
      await f.node.rpc('anvil_dropAllTransactions', []);
      const live = await store.liveAttempts(charge);
      expect(live).toHaveLength(1);
      await store.dropAttempt(charge, live[0]!, 'forgotten by the node (test)');
      expect(await store.reopen(charge)).toBe(true);

      // Signed again: the same bytes.
      const reopened = await open();
      expect(reopened.state).toBe('pending');
      const revived = await store.sign(reopened, null, (trx) =>
        trx.record({
          signed: first!.signed,
          txHash: first!.tx_hash,
          sender: first!.signed.sender!,
          nonce: first!.nonce,
          feeBumpPercent: 0,
        }),
      );
      expect(revived).toMatchObject({ id: first!.id, txHash: first!.tx_hash });
      const rows = await attemptsOf(charge.id);
      expect(rows.map((a) => [a.id, a.tx_hash, a.state, a.dropped_reason])).toEqual([[first!.id, first!.tx_hash, 'live', null]]);
      expect((await open()).state).toBe('signed');

      // The same hash recorded while that attempt is live (as a replacement) is refused; nothing changes.
      const signedNow = await open();
      const [liveNow] = await store.liveAttempts(signedNow);
      await expect(
        store.sign(signedNow, liveNow!, (trx) =>
          trx.record({
            signed: first!.signed,
            txHash: first!.tx_hash,
            sender: first!.signed.sender!,
            nonce: first!.nonce,
            feeBumpPercent: 25,
          }),
        ),
      ).rejects.toThrow(/already a live attempt/);
      expect(await attemptsOf(charge.id)).toHaveLength(1);
    } finally {
      await f.node.rpc('evm_setAutomine', [true]);
    }
    await f.settle();
    const charges = await f.h.t.db
      .selectFrom('subscription_charges')
      .selectAll()
      .where('subscription_id', '=', s.id)
      .orderBy('id')
      .execute();
    expect(charges.map((c) => c.state)).toEqual(['succeeded', 'succeeded']);
    const after = await transfersFrom(f.node, f.tokens.USDT.address, customer.address);
    expect(after).toHaveLength(2);
    expect(after[1]!.tx).toBe(charges[1]!.tx_hash);
    expect(await attemptsOf(charges[1]!.id)).toHaveLength(1);
  }, 180_000);
});
