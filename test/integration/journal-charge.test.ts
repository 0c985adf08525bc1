import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plan, startSubsFixture, type SubsFixture } from './subscriptions-fixture.js';

// A subscription charge in the journal (docs/journal.md): customer → settlement address for what it received, and the
// network fee burnt by the charger that sent the transferFrom, in the transaction that makes the invoice paid.

let f: SubsFixture;
beforeAll(async () => {
  f = await startSubsFixture({ start: new Date('2027-01-31T10:00:00Z') });
}, 120_000);
afterAll(async () => f?.close());

describe('journal of a subscription charge', () => {
  it('journals the charge with the fee burnt by the charger; the chargers are registered for watching', async () => {
    const customer = await f.customer(31, 50_000_000n);
    const sub = await f.create(plan({}, 1));
    await f.authorize(sub.id, customer);
    await f.settle();
    const charge = await f.h.t.db
      .selectFrom('subscription_charges')
      .selectAll()
      .where('subscription_id', '=', sub.id)
      .executeTakeFirstOrThrow();
    expect(charge.state).toBe('succeeded');
    const entry = await f.h.t.db.selectFrom('journal_entries').selectAll().where('kind', '=', 'charge').executeTakeFirstOrThrow();
    expect(entry).toMatchObject({
      object_type: 'invoice',
      object_id: charge.invoice_id,
      session_id: charge.payment_id,
      merchant_id: f.merchantId,
    });
    const receipt = (await f.node.provider.getTransactionReceipt(entry.tx_hash))!;
    expect(entry.block_height).toBe(BigInt(receipt.blockNumber));
    const w = await f.deps.walletResolver.wallets(f.merchantId, 'test', 'ethereum');
    const legs = await f.h.t.db
      .selectFrom('journal_legs')
      .select(['account', 'asset', 'amount'])
      .where('entry_id', '=', entry.id)
      .execute();
    expect(legs).toHaveLength(4);
    expect(legs).toEqual(
      expect.arrayContaining([
        { account: 'external', asset: 'ethereum:test:USDT', amount: -10_000_000n },
        { account: `address:ethereum:test:${w.settlement}`, asset: 'ethereum:test:USDT', amount: 10_000_000n },
        { account: `address:ethereum:test:${w.charger}`, asset: 'ethereum:test:native', amount: -receipt.fee },
        { account: 'fees:ethereum', asset: 'ethereum:test:native', amount: receipt.fee },
      ]),
    );
    const wallets = await f.h.t.db
      .selectFrom('journal_wallets')
      .select(['address', 'role'])
      .where('merchant_id', '=', f.merchantId)
      .orderBy('role')
      .execute();
    expect(wallets).toEqual([
      { address: w.charger, role: 'charges' },
      { address: w.settlement, role: 'refunds' },
    ]);
  });
});
