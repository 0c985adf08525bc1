import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listSweeps } from '../../src/ledger/treasury/sweeps.js';
import { setTreasuryDestination } from '../../src/ledger/treasury/destinations.js';
import { expectBurntFeeOnce, journalBalance } from '../support/failed-fee.js';
import type { FakeTicker } from '../support/fake-ticker.js';
import { reconcileOnceCovering } from '../support/reconcile-covering.js';
import { sweepRunCli } from '../support/sweep-cli.js';
import { solanaSweepSetup } from '../support/sweep-setup.js';
import { startSolanaServiceHarness, type SolanaServiceHarness } from '../support/solana-service-harness.js';

// A payment landing in a deposit address after a sweep's batch was built and broadcast, before the batch lands
// (docs/treasury-solana.md, "Closing"). The batch only transfers the planned amounts; the accounts it empties are closed
// by a later `close` step built from the chain once the batch landed. So the late payment fails nothing: the batch
// lands, the watcher credits the payment as usual, the close step leaves that account open, a later sweep takes the
// rest and closes it, and reconcile finds the chain and the journal equal.
let h: SolanaServiceHarness;
let ticker: FakeTicker;
let station: string;

beforeAll(async () => {
  h = await startSolanaServiceHarness({ extraEnv: { ROLES: 'api,watcher' } });
  ({ ticker, station } = await solanaSweepSetup(h, { token: 'USDC' }));
}, 180_000);
afterAll(async () => {
  await ticker?.close();
  await h?.close();
});

const sweepRun = (merchantId: string) => sweepRunCli(h.env, ticker.url, merchantId);
const ata = (owner: string) => getAssociatedTokenAddressSync(new PublicKey(h.mints.USDC), new PublicKey(owner), true);

/** A signed USDC payment of `amount` from a fresh payer to `owner`'s deposit account (not sent). */
async function payment(owner: string, amount: bigint): Promise<Uint8Array> {
  const payer = Keypair.generate();
  h.rpc.validator.airdrop(payer.publicKey.toBase58(), BigInt(LAMPORTS_PER_SOL));
  h.rpc.validator.setTokenAccount({ mint: h.mints.USDC, owner: payer.publicKey.toBase58(), amount });
  const mint = new PublicKey(h.mints.USDC);
  const { blockhash } = await h.conn.getLatestBlockhash('confirmed');
  const msg = new TransactionMessage({
    payerKey: payer.publicKey,
    recentBlockhash: blockhash,
    instructions: [
      createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, ata(owner), new PublicKey(owner), mint),
      createTransferCheckedInstruction(ata(payer.publicKey.toBase58()), mint, ata(owner), payer.publicKey, amount, 6),
    ],
  }).compileToV0Message();
  const tx = new VersionedTransaction(msg);
  tx.sign([payer]);
  return tx.serialize();
}

/** The states of a merchant's sweep attempts of `purpose`. */
const attemptStates = (merchantId: string, purpose: string) =>
  h.t.db
    .selectFrom('sweep_step_attempts as a')
    .innerJoin('sweep_steps as st', 'st.id', 'a.step_id')
    .innerJoin('sweeps as w', 'w.id', 'st.sweep_id')
    .select(['a.state', 'a.tx_hash'])
    .where('w.merchant_id', '=', merchantId)
    .where('st.purpose', '=', purpose)
    .execute();

const confirmedDeposit = (txHash: string) =>
  h.until(async () => {
    const d = await h.t.db.selectFrom('deposits').selectAll().where('tx_hash', '=', txHash).executeTakeFirst();
    return d?.status === 'confirmed' ? d : undefined;
  }, 60_000);

describe('a payment landing in a deposit address while its sweep is in flight (Solana)', () => {
  it('the batch lands, the payment is credited and left open, a later sweep takes it and closes; reconcile balances', async () => {
    const shop = await h.newMerchant('Late payer');
    const treasury = Keypair.generate().publicKey.toBase58();
    await setTreasuryDestination(h.t.db, {
      merchantId: shop.id,
      network: 'solana',
      mode: 'test',
      treasuryAddress: treasury,
      actor: 'test',
    });
    const s = await h.paidSession(shop, { amount: '9.00' });
    const deposit = s.depositOwner;
    await confirmedDeposit(s.paymentTx);

    // The sweep's batch is built, signed, persisted and broadcast; it is held by the leader, which lands the late
    // payment first (as a leader may order transactions), then the batch.
    const late = 2_500_000n;
    h.rpc.validator.pauseLanding('hold');
    let lateTx = '';
    let first: ReturnType<typeof sweepRun> | undefined;
    try {
      first = sweepRun(shop.id);
      await h.until(async () => {
        const a = await h.t.db
          .selectFrom('sweep_step_attempts as a')
          .innerJoin('sweep_steps as st', 'st.id', 'a.step_id')
          .innerJoin('sweeps as w', 'w.id', 'st.sweep_id')
          .select(['a.state', 'st.purpose'])
          .where('w.merchant_id', '=', shop.id)
          .execute();
        return a.some((x) => x.purpose === 'batch' && x.state === 'broadcast') ? true : undefined;
      }, 90_000);
      lateTx = h.rpc.validator.landAhead(await payment(deposit, late));
    } finally {
      h.rpc.validator.resumeLanding();
    }
    const r1 = await first!;
    expect(r1.code, r1.err).toBe(0);

    const [sweep] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 });
    expect(sweep).toMatchObject({ status: 'completed', swept_base: 9_000_000n, failure_reason: null });
    // The batch landed; the close step found the account holding the late payment and closed nothing (skipped).
    expect(sweep!.steps.map((x) => [x.purpose, x.status])).toEqual([
      ['batch', 'succeeded'],
      ['close', 'skipped'],
    ]);
    expect(sweep!.sources).toEqual([expect.objectContaining({ address: deposit, state: 'swept', swept_base: 9_000_000n })]);
    expect(await h.tokenBalance(h.mints.USDC, treasury)).toBe(9_000_000n);
    expect(await h.tokenBalance(h.mints.USDC, deposit)).toBe(late);

    // The watcher credits the late payment as any payment to that address.
    const credited = await confirmedDeposit(lateTx);
    expect(credited).toMatchObject({ to_address: deposit, amount_base: late });

    // A later sweep takes the rest, then closes the emptied account (rent back to the gas station).
    const r2 = await sweepRun(shop.id);
    expect(r2.code, r2.err).toBe(0);
    const [second] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 });
    expect(second!.id).not.toBe(sweep!.id);
    expect(second).toMatchObject({ status: 'completed', swept_base: late });
    expect(second!.steps.map((x) => [x.purpose, x.status])).toEqual([
      ['batch', 'succeeded'],
      ['close', 'succeeded'],
    ]);
    const rent = BigInt(await h.conn.getMinimumBalanceForRentExemption(165));
    expect(second!.steps[1]!.native_moved).toBe(rent);
    expect(await h.conn.getAccountInfo(ata(deposit), 'confirmed')).toBeNull();
    expect(await h.tokenBalance(h.mints.USDC, treasury)).toBe(9_000_000n + late);

    // Reconcile: the deposit's USDC (both payments in, both sweeps out: 0) and the gas station's SOL are the journal's.
    const closeTx = (await h.conn.getTransaction(second!.steps[1]!.tx_hash!, {
      commitment: 'confirmed',
      maxSupportedTransactionVersion: 0,
    }))!;
    const report = await reconcileOnceCovering(h.t.db, h.adapter, BigInt(closeTx.slot), h.until);
    expect(report.differences).toEqual([]);
    expect(report.unexplainedNative).toEqual([]);
    const account = (a: string) => `address:solana:test:${a}`;
    expect(await journalBalance(h.t.db, account(deposit), 'solana:test:USDC')).toBe(0n);
    expect(await journalBalance(h.t.db, account(station), 'solana:test:native')).toBe(
      BigInt(await h.conn.getBalance(new PublicKey(station), 'finalized')),
    );
  }, 360_000);

  it('a payment landing after the close step is built fails that close alone: the sweep completes, the fee is journaled', async () => {
    const shop = await h.newMerchant('Late payer at close');
    const treasury = Keypair.generate().publicKey.toBase58();
    await setTreasuryDestination(h.t.db, {
      merchantId: shop.id,
      network: 'solana',
      mode: 'test',
      treasuryAddress: treasury,
      actor: 'test',
    });
    const [a, b] = [await h.paidSession(shop, { amount: '4.00' }), await h.paidSession(shop, { amount: '6.00' })];
    await confirmedDeposit(a.paymentTx);
    await confirmedDeposit(b.paymentTx);

    // The batch lands as usual; the close step, built and broadcast once the batch is final, is held by the leader,
    // which lands a payment to `a` first: that CloseAccount meets a non-empty account and the close transaction fails.
    const late = 1_500_000n;
    let lateTx = '';
    let closeTx = '';
    let run: ReturnType<typeof sweepRun> | undefined;
    h.rpc.validator.pauseLanding('hold');
    try {
      run = sweepRun(shop.id);
      await h.until(async () => ((await attemptStates(shop.id, 'batch')).some((x) => x.state === 'broadcast') ? true : undefined), 90_000);
      h.rpc.validator.resumeLanding();
      h.rpc.validator.pauseLanding('hold');
      closeTx = await h.until(async () => (await attemptStates(shop.id, 'close')).find((x) => x.state === 'broadcast')?.tx_hash, 90_000);
      lateTx = h.rpc.validator.landAhead(await payment(a.depositOwner, late));
    } finally {
      h.rpc.validator.resumeLanding();
    }
    const r = await run!;
    expect(r.code, r.err).toBe(0);

    const [sweep] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 });
    expect(sweep).toMatchObject({ status: 'completed', swept_base: 10_000_000n, failure_reason: null });
    expect(sweep!.steps.map((x) => [x.purpose, x.status])).toEqual([
      ['batch', 'succeeded'],
      ['close', 'failed'],
    ]);
    expect(sweep!.steps[1]!.failure_reason).toMatch(/failed on chain/);
    expect(sweep!.sources.map((x) => x.state)).toEqual(['swept', 'swept']);
    expect(await h.tokenBalance(h.mints.USDC, treasury)).toBe(10_000_000n);
    const tx = (await h.conn.getTransaction(closeTx, { commitment: 'finalized', maxSupportedTransactionVersion: 0 }))!;
    expect(tx.meta!.err).not.toBeNull();
    await expectBurntFeeOnce(h.t.db, {
      kind: 'sweep',
      object: { type: 'sweep', id: sweep!.id },
      network: 'solana',
      txHash: closeTx,
      merchantId: shop.id,
      blockHeight: BigInt(tx.slot),
      sender: station,
      fee: BigInt(tx.meta!.fee),
    });
    // Nothing closed: `a` holds the late payment, `b` stays open and empty (its rent stays in it: the documented cost).
    expect(await h.tokenBalance(h.mints.USDC, a.depositOwner)).toBe(late);
    expect(await h.conn.getAccountInfo(ata(b.depositOwner), 'confirmed')).not.toBeNull();

    // The payment is credited; a later sweep takes it and closes `a`'s account.
    await confirmedDeposit(lateTx);
    const r2 = await sweepRun(shop.id);
    expect(r2.code, r2.err).toBe(0);
    const [second] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 });
    expect(second).toMatchObject({ status: 'completed', swept_base: late });
    expect(second!.steps.map((x) => [x.purpose, x.status])).toEqual([
      ['batch', 'succeeded'],
      ['close', 'succeeded'],
    ]);
    expect(await h.conn.getAccountInfo(ata(a.depositOwner), 'confirmed')).toBeNull();

    const last = (await h.conn.getTransaction(second!.steps[1]!.tx_hash!, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }))!;
    const report = await reconcileOnceCovering(h.t.db, h.adapter, BigInt(last.slot), h.until);
    expect(report.differences).toEqual([]);
    expect(report.unexplainedNative).toEqual([]);
    for (const d of [a, b]) expect(await journalBalance(h.t.db, `address:solana:test:${d.depositOwner}`, 'solana:test:USDC')).toBe(0n);
  }, 360_000);
});
