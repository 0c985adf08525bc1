import { ACCOUNT_SIZE } from '@solana/spl-token';
import { PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plan } from './subscriptions-fixture.js';
import { startSolanaSubsFixture, type SolanaSubsFixture } from './subscriptions-solana-fixture.js';
import { NetworkWatcher } from '../../src/watcher/network-watcher.js';
import { reconcileAfterWatcher } from '../support/reconcile-covering.js';

// The rent a Solana subscription charge locks (docs/journal.md "Solana deposit setup and rent"): the first charge to a
// settlement address creates its token account in the same transaction, paid by the charger (the fee payer). The
// charge's journal entry books that rent charger → fees:solana beside the fee, in the transaction that makes the
// invoice paid; reconcile then reads the charger's SOL and the settlement address exactly as the journal says. A
// renewal to the same token account locks no rent and books none.

const PERIOD = 10_000_000n; // $10 in 6-decimal USDT
let f: SolanaSubsFixture;
let watcher: NetworkWatcher;
beforeAll(async () => {
  f = await startSolanaSubsFixture({ start: new Date('2027-01-31T10:00:00Z') });
  watcher = new NetworkWatcher({ db: f.h.t.db, adapter: f.adapter, pollIntervalMs: 50 });
}, 120_000);
afterAll(async () => f?.close());

/** Lets what landed finalize, the watcher commit it, then reconciles Solana. */
const reconciled = () => reconcileAfterWatcher(f.h.t.db, f.adapter, watcher, () => f.rpc.validator.advanceSlots(33));

async function chargeEntry(txHash: string) {
  const entry = await f.h.t.db
    .selectFrom('journal_entries')
    .selectAll()
    .where('tx_hash', '=', txHash)
    .where('kind', '=', 'charge')
    .executeTakeFirstOrThrow();
  const legs = await f.h.t.db
    .selectFrom('journal_legs')
    .select(['account', 'asset', 'amount'])
    .where('entry_id', '=', entry.id)
    .orderBy('account')
    .orderBy('asset')
    .execute();
  return { entry, legs };
}

describe('journal of a Solana subscription charge', () => {
  it('books the rent of the settlement token account the first charge creates, none on the renewal; reconcile is exact', async () => {
    const w = await f.deps.walletResolver.resolve(f.merchantId, 'test', 'solana');
    const chargerKey = new PublicKey(w.charger);
    // Before any charge: the charger's opening balance (the SOL it was funded with) is booked, nothing differs.
    const opening = await reconciled();
    expect(opening.height).not.toBeNull();
    expect(opening.differences).toEqual([]);
    const lamports0 = BigInt(await f.conn.getBalance(chargerKey, 'confirmed'));

    const customer = f.customer(100_000_000n);
    const owner = customer.publicKey.toBase58();
    const sub = await f.create(plan({}, 1));
    const info = await f.select(sub.id, owner);
    expect(info.spender).toBe(w.charger);
    await f.approve(customer, info.spender, BigInt(info.allowance_base));
    await f.settle();
    const first = await f.h.t.db
      .selectFrom('subscription_charges')
      .selectAll()
      .where('subscription_id', '=', sub.id)
      .executeTakeFirstOrThrow();
    expect(first.state).toBe('succeeded');
    expect(await f.tokenBalance(f.mints.USDT, w.settlement)).toBe(PERIOD);

    // On chain: the transaction created the settlement token account, the charger paid the fee and its rent.
    const tx1 = (await f.conn.getTransaction(first.tx_hash!, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }))!;
    expect(tx1.meta?.err).toBeNull();
    const fee1 = BigInt(tx1.meta!.fee);
    const rent = BigInt(await f.conn.getMinimumBalanceForRentExemption(ACCOUNT_SIZE));
    expect(fee1).toBeGreaterThan(0n);
    expect(rent).toBeGreaterThan(0n);
    const lamports1 = BigInt(await f.conn.getBalance(chargerKey, 'confirmed'));
    expect(lamports0 - lamports1).toBe(fee1 + rent);

    const c1 = await chargeEntry(first.tx_hash!);
    expect(c1.entry).toMatchObject({
      leg_key: 'tx',
      object_type: 'invoice',
      object_id: first.invoice_id,
      merchant_id: f.merchantId,
      block_height: BigInt(tx1.slot),
    });
    expect(c1.legs).toEqual([
      { account: `address:solana:test:${w.charger}`, asset: 'solana:test:native', amount: -(fee1 + rent) },
      { account: `address:solana:test:${w.settlement}`, asset: 'solana:test:USDT', amount: PERIOD },
      { account: 'external', asset: 'solana:test:USDT', amount: -PERIOD },
      { account: 'fees:solana', asset: 'solana:test:native', amount: fee1 + rent },
    ]);

    // The charger's SOL and the settlement address's USDT reconcile to the lamport: no native drift is booked.
    const r1 = await reconciled();
    expect(r1.height!).toBeGreaterThanOrEqual(BigInt(tx1.slot));
    expect(r1.differences).toEqual([]);
    expect(r1.unexplainedNative).toEqual([]);
    const native = r1.summary.find((s) => s.asset === 'native' && s.merchantId === f.merchantId)!;
    expect(native).toMatchObject({ chain: lamports1, expected: lamports1, difference: 0n });

    // The renewal pays into the token account that now exists: fee only, no rent.
    const s = (await f.client.get(`/api/v1/subscriptions/${sub.id}`)).json;
    f.clock.set(new Date(s.current_period_end * 1000 + 1000));
    await f.settle();
    const charges = await f.h.t.db
      .selectFrom('subscription_charges')
      .selectAll()
      .where('subscription_id', '=', sub.id)
      .orderBy('id')
      .execute();
    expect(charges.map((c) => c.state)).toEqual(['succeeded', 'succeeded']);
    const second = charges[1]!;
    const tx2 = (await f.conn.getTransaction(second.tx_hash!, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }))!;
    const fee2 = BigInt(tx2.meta!.fee);
    const lamports2 = BigInt(await f.conn.getBalance(chargerKey, 'confirmed'));
    expect(lamports1 - lamports2).toBe(fee2);
    const c2 = await chargeEntry(second.tx_hash!);
    expect(c2.legs).toEqual([
      { account: `address:solana:test:${w.charger}`, asset: 'solana:test:native', amount: -fee2 },
      { account: `address:solana:test:${w.settlement}`, asset: 'solana:test:USDT', amount: PERIOD },
      { account: 'external', asset: 'solana:test:USDT', amount: -PERIOD },
      { account: 'fees:solana', asset: 'solana:test:native', amount: fee2 },
    ]);

    const r2 = await reconciled();
    expect(r2.differences).toEqual([]);
    expect(r2.unexplainedNative).toEqual([]);
    const usdt = r2.summary.find((x) => x.asset === 'USDT' && x.merchantId === f.merchantId)!;
    expect(usdt).toMatchObject({ expected: 2n * PERIOD, chain: 2n * PERIOD, difference: 0n });
    // Nothing was absorbed into an opening balance after the first run: the charger's is the SOL it was funded with.
    const openings = await f.h.t.db
      .selectFrom('journal_entries as e')
      .innerJoin('journal_legs as l', 'l.entry_id', 'e.id')
      .select(['l.account', 'l.amount', 'e.block_height'])
      .where('e.kind', '=', 'opening_balance')
      .where('l.account', '!=', 'external')
      .execute();
    expect(openings).toEqual([{ account: `address:solana:test:${w.charger}`, amount: lamports0, block_height: opening.height }]);
  }, 180_000);
});
