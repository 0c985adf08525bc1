import { Interface, type Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSchedulerTick } from '../../src/subscriptions/scheduler.js';
import { plan, startSubsFixture, type SubsFixture } from './subscriptions-fixture.js';
import { transfersFrom } from '../support/chain-watch.js';
import { UsageError } from '../../src/cli/args.js';
import { walletGuardCli } from '../../src/cli/wallet-guard.js';

// A charge in flight that does not land: replaced at the same nonce with a higher fee when stuck in the mempool, and
// signed afresh (new nonce, pre-flight again) once its only attempt is proven dead because its nonce went to another
// transaction. Each period is still charged exactly once, counted on chain.

let f: SubsFixture;
const T0 = new Date('2027-09-01T00:00:00Z');
const DAY = 86_400_000;
beforeAll(async () => {
  f = await startSubsFixture({ start: T0 });
}, 120_000);
afterAll(async () => f?.close());

/** Hashes of the transactions that moved USDT from `owner`, read straight from the node. */
async function usdtTransfersFrom(owner: string): Promise<string[]> {
  return (await transfersFrom(f.node, f.tokens.USDT.address, owner)).map((t) => t.tx);
}

async function activeDailySub(index: number): Promise<{ id: string; customer: Wallet }> {
  const customer = await f.customer(index, 100_000_000n);
  const s = await f.create({ ...plan({ recurring: { interval: 'day' } }), customer: `cus_att_${index}` });
  await f.authorize(s.id, customer);
  await f.settle();
  expect((await f.client.get(`/api/v1/subscriptions/${s.id}`)).json.status).toBe('active');
  return { id: s.id, customer };
}

async function openCharge(subId: string) {
  return f.h.t.db
    .selectFrom('subscription_charges')
    .selectAll()
    .where('subscription_id', '=', subId)
    .where('state', 'in', ['pending', 'signed', 'broadcast'])
    .executeTakeFirstOrThrow();
}

describe('charges that do not land', () => {
  it('a charge stuck in the mempool is replaced at the same nonce with a higher fee; one transfer lands', async () => {
    const { id, customer } = await activeDailySub(300);
    expect((await usdtTransfersFrom(customer.address)).length).toBe(1);
    const deps = { ...f.deps, stuckAfterMs: 0 };
    await f.node.rpc('evm_setAutomine', [false]);
    try {
      f.clock.set(new Date(T0.getTime() + DAY + 60_000));
      await runSchedulerTick(deps); // renewal due: invoice, charge signed and broadcast, held in the mempool
      const charge = await openCharge(id);
      expect(charge.state).toBe('broadcast');
      await runSchedulerTick(deps); // pending and older than stuckAfterMs: replaced
      const attempts = await f.h.t.db
        .selectFrom('subscription_charge_attempts')
        .selectAll()
        .where('charge_id', '=', charge.id)
        .orderBy('id')
        .execute();
      expect(attempts.length).toBe(2);
      expect(attempts[1]!.nonce).toBe(attempts[0]!.nonce);
      expect(attempts[1]!.tx_hash).not.toBe(attempts[0]!.tx_hash);
      expect(attempts[1]!.fee_bump_percent).toBe(25);
      const [a0, a1] = await Promise.all(
        attempts.map((a) => f.node.rpc<{ maxFeePerGas: string } | null>('eth_getTransactionByHash', [a.tx_hash])),
      );
      expect(a1).not.toBeNull();
      if (a0) expect(BigInt(a1!.maxFeePerGas)).toBeGreaterThan(BigInt(a0.maxFeePerGas));
      await f.node.rpc('evm_mine', []);
    } finally {
      await f.node.rpc('evm_setAutomine', [true]);
    }
    await f.settle();
    const paid = await f.h.t.db
      .selectFrom('subscription_charges')
      .selectAll()
      .where('subscription_id', '=', id)
      .where('state', '=', 'succeeded')
      .orderBy('id')
      .execute();
    expect(paid.length).toBe(2);
    const onChain = await usdtTransfersFrom(customer.address);
    expect(onChain.length).toBe(2); // one per period: the original and its replacement never both landed
    const attempts = await f.h.t.db
      .selectFrom('subscription_charge_attempts')
      .select('tx_hash')
      .where('charge_id', '=', paid[1]!.id)
      .execute();
    expect(attempts.map((a) => a.tx_hash)).toContain(onChain[1]);
    expect((await f.client.get(`/api/v1/subscriptions/${id}`)).json.status).toBe('active');
    // Out of the way of the next test's renewal (its charger nonces are counted there).
    expect((await f.client.post(`/api/v1/subscriptions/${id}/cancel`, {})).status).toBe(200);
  }, 120_000);

  it('a charge whose nonce went to another transaction is signed afresh at a new nonce after the pre-flight', async () => {
    const { id, customer } = await activeDailySub(301);
    const before = (await usdtTransfersFrom(customer.address)).length;
    const w = await f.deps.walletResolver.resolve(f.merchantId, 'test', 'ethereum');
    await f.node.rpc('evm_setAutomine', [false]);
    let lost: string;
    try {
      f.clock.set(new Date(f.clock.now().getTime() + DAY + 60_000));
      await runSchedulerTick(f.deps);
      const charge = await openCharge(id);
      lost = charge.tx_hash!;
      // The operator (or anything holding the charger key) spends the same nonce: the charge's bytes can never land.
      await f.node.rpc('anvil_dropTransaction', [lost]);
      await f.node.rpc('anvil_impersonateAccount', [w.charger]);
      await f.node.rpc('eth_sendTransaction', [
        { from: w.charger, to: w.charger, value: '0x0', nonce: `0x${BigInt(charge.nonce!).toString(16)}` },
      ]);
      await f.node.rpc('anvil_stopImpersonatingAccount', [w.charger]);
      await f.node.rpc('evm_mine', []);
    } finally {
      await f.node.rpc('evm_setAutomine', [true]);
    }
    await f.settle();
    const charges = await f.h.t.db.selectFrom('subscription_charges').selectAll().where('subscription_id', '=', id).orderBy('id').execute();
    expect(charges.map((c) => c.state)).toEqual(['succeeded', 'succeeded']);
    const attempts = await f.h.t.db
      .selectFrom('subscription_charge_attempts')
      .selectAll()
      .where('charge_id', '=', charges[1]!.id)
      .orderBy('id')
      .execute();
    expect(attempts.length).toBe(2);
    expect(attempts[0]!.tx_hash).toBe(lost);
    expect(attempts[0]!.state).toBe('dropped');
    expect(BigInt(attempts[1]!.nonce!)).toBe(BigInt(attempts[0]!.nonce!) + 1n);
    const onChain = await usdtTransfersFrom(customer.address);
    expect(onChain.length).toBe(before + 1);
    expect(onChain).toContain(attempts[1]!.tx_hash);
    expect(onChain).not.toContain(lost);
    // Out of the way of the next test's renewal (its charger nonces are counted there).
    expect((await f.client.post(`/api/v1/subscriptions/${id}/cancel`, {})).status).toBe(200);
  }, 120_000);

  it('a charger that sent a transaction the ledger does not know signs nothing until the operator accepts its nonce', async () => {
    const { id, customer } = await activeDailySub(302);
    const before = (await usdtTransfersFrom(customer.address)).length;
    const w = await f.deps.walletResolver.resolve(f.merchantId, 'test', 'ethereum');
    const nonceRow = () =>
      f.h.t.db
        .selectFrom('hot_wallet_nonces')
        .selectAll()
        .where('network', '=', 'ethereum')
        .where('mode', '=', 'test')
        .where((eb) => eb(eb.fn('lower', ['address']), '=', w.charger.toLowerCase()))
        .executeTakeFirstOrThrow();
    const stored = (await nonceRow()).next_nonce;
    expect(BigInt(await f.node.provider.getTransactionCount(w.charger, 'pending'))).toBe(stored);
    // The next period's charge, sent from the charger key outside this ledger (what a database restored from a backup
    // older than the charge looks like): the chain counts a transaction the ledger never signed.
    const first = await f.h.t.db.selectFrom('subscription_charges').selectAll().where('subscription_id', '=', id).executeTakeFirstOrThrow();
    const data = new Interface(['function transferFrom(address,address,uint256)']).encodeFunctionData('transferFrom', [
      customer.address,
      first.destination_address,
      first.amount_base,
    ]);
    await f.node.rpc('anvil_impersonateAccount', [w.charger]);
    const byHand = await f.node.rpc<string>('eth_sendTransaction', [{ from: w.charger, to: f.tokens.USDT.address, data }]);
    await f.node.rpc('anvil_stopImpersonatingAccount', [w.charger]);
    await f.node.mine(2);
    const chainNonce = stored + 1n;
    expect(BigInt(await f.node.provider.getTransactionCount(w.charger, 'pending'))).toBe(chainNonce);

    const logged: { fields: Record<string, unknown>; msg: string }[] = [];
    const log = { info() {}, warn() {}, error: (fields: Record<string, unknown>, msg: string) => logged.push({ fields, msg }) };
    f.clock.set(new Date(f.clock.now().getTime() + DAY + 60_000));
    for (let i = 0; i < 3; i++) await runSchedulerTick({ ...f.deps, log });
    // The renewal waits: nothing signed, nothing moved, the customer's invoice not failed.
    const waiting = await openCharge(id);
    expect(waiting.state).toBe('pending');
    expect(await f.h.t.db.selectFrom('subscription_charge_attempts').select('id').where('charge_id', '=', waiting.id).execute()).toEqual(
      [],
    );
    expect(await usdtTransfersFrom(customer.address)).toEqual([...(await usdtTransfersFrom(customer.address)).slice(0, before), byHand]);
    const noted = await nonceRow();
    expect(noted.next_nonce).toBe(stored);
    expect(noted.unknown_chain_nonce).toBe(chainNonce);
    expect(noted.unknown_seen_at).toBeInstanceOf(Date);
    const refusal = logged.find((l) => /does not know/.test(l.msg));
    expect(refusal?.fields).toMatchObject({ wallet: noted.address, stored_nonce: String(stored), chain_nonce: String(chainNonce) });

    const printed: unknown[] = [];
    const ctx = {
      db: f.h.t.db,
      adapters: async () => f.deps.adapters,
      keys: null,
      enqueue: async () => {},
      out: (v: unknown) => printed.push(v),
    };
    await walletGuardCli('wallet-nonces', ['--network', 'ethereum', '--mode', 'test'], ctx);
    expect(printed[0]).toContainEqual(
      expect.objectContaining({
        address: noted.address,
        next_nonce: stored,
        unknown_transactions: expect.objectContaining({ chain_nonce: chainNonce }),
      }),
    );
    // The operator finds the charger's transaction between the two nonces and records it as the charge's payment: a
    // transaction already recorded for another charge (the previous period's) is refused; the engine settles it.
    await expect(
      walletGuardCli('settle-charge-from-chain', [String(waiting.id), '--tx', first.tx_hash!, '--actor', 'ops@example'], ctx),
    ).rejects.toThrow(UsageError);
    await walletGuardCli('settle-charge-from-chain', [String(waiting.id), '--tx', byHand, '--actor', 'ops@example'], ctx);
    await f.settle();
    const paidByHand = await f.h.t.db.selectFrom('subscription_charges').selectAll().where('id', '=', waiting.id).executeTakeFirstOrThrow();
    expect(paidByHand).toMatchObject({ state: 'succeeded', tx_hash: byHand, delivered_base: first.amount_base });
    expect((await f.client.get(`/api/v1/subscriptions/${id}`)).json.status).toBe('active');
    expect((await usdtTransfersFrom(customer.address)).length).toBe(before + 1);
    expect((await nonceRow()).unknown_chain_nonce).toBe(chainNonce); // still refused: not accepted yet

    // A nonce other than the chain's is refused and changes nothing.
    const accept = (nonce: bigint) =>
      walletGuardCli(
        'wallet-accept-nonce',
        [
          '--network',
          'ethereum',
          '--mode',
          'test',
          '--address',
          w.charger,
          '--nonce',
          String(nonce),
          '--actor',
          'ops@example',
          '--note',
          'checked',
        ],
        ctx,
      );
    await expect(accept(stored)).rejects.toThrow(UsageError);
    expect((await nonceRow()).unknown_chain_nonce).toBe(chainNonce);
    await accept(chainNonce);
    expect(printed[2]).toMatchObject({ previous_next_nonce: stored, next_nonce: chainNonce, actor: 'ops@example' });
    const audit = await f.h.t.db.selectFrom('hot_wallet_nonce_acceptances').selectAll().execute();
    expect(audit.map((a) => [a.address, a.previous_next_nonce, a.accepted_next_nonce, a.actor, a.note])).toEqual([
      [noted.address, stored, chainNonce, 'ops@example', 'checked'],
    ]);
    expect((await nonceRow()).unknown_chain_nonce).toBeNull();

    // Signing resumes at the accepted nonce: the next period is charged once, by the gateway.
    f.clock.set(new Date(f.clock.now().getTime() + DAY + 60_000));
    await f.settle();
    const charges = await f.h.t.db.selectFrom('subscription_charges').selectAll().where('subscription_id', '=', id).orderBy('id').execute();
    expect(charges.map((c) => c.state)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(charges[2]!.nonce).toBe(chainNonce);
    const onChain = await usdtTransfersFrom(customer.address);
    expect(onChain.length).toBe(before + 2);
    expect(onChain).toContain(charges[2]!.tx_hash);
  }, 120_000);
});
