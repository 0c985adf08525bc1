import { decodeApproveCheckedInstruction, getAccount, getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { Keypair, PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERIOD_EVENTS, plan } from './subscriptions-fixture.js';
import { startSolanaSubsFixture, type SolanaSubsFixture } from './subscriptions-solana-fixture.js';

// One subscription on Solana, authorized by SPL Token delegation: the customer's wallet signs the ApproveChecked the
// adapter prepares (delegate = the merchant's charger), the approval poller reads the delegation at `finalized`, the
// charger pulls each period with a TransferChecked as delegate into the settlement wallet's ATA. Then the customer
// delegates the account to someone else, and the next renewal fails before any transaction is sent.

const PERIOD = 10_000_000n; // $10 in 6-decimal USDT
let f: SolanaSubsFixture;
beforeAll(async () => {
  f = await startSolanaSubsFixture({ start: new Date('2027-01-31T10:00:00Z') });
}, 120_000);
afterAll(async () => f?.close());

describe('subscriptions on Solana (SPL Token delegation)', () => {
  it('authorize by ApproveChecked → active, first charge → renewal → delegate replaced → past_due without a transaction', async () => {
    const customer = f.customer(100_000_000n); // 100 USDT
    const owner = customer.publicKey.toBase58();
    const w = await f.deps.walletResolver.resolve(f.merchantId, 'test', 'solana');
    const sub = await f.create(plan({}, 1));
    expect(sub.status).toBe('incomplete');

    const info = await f.select(sub.id, owner);
    expect(info).toMatchObject({
      network: 'solana',
      token: 'USDT',
      token_contract: f.mints.USDT,
      spender: w.charger,
      allowance_base: '120000000',
      current_allowance_base: '0',
      authorized: false,
    });

    // The wallet transaction: legacy, fee payer the customer, one ApproveChecked, no signature yet.
    const { signature: approveSig, unsigned } = await f.approve(customer, info.spender, BigInt(info.allowance_base));
    expect(unsigned.feePayer?.toBase58()).toBe(owner);
    expect(unsigned.signatures.every((s) => s.signature === null)).toBe(true);
    expect(unsigned.instructions).toHaveLength(1);
    const ix = decodeApproveCheckedInstruction(unsigned.instructions[0]!);
    const customerAta = getAssociatedTokenAddressSync(new PublicKey(f.mints.USDT), customer.publicKey, true);
    expect(ix.keys.account.pubkey.toBase58()).toBe(customerAta.toBase58());
    expect(ix.keys.delegate.pubkey.toBase58()).toBe(w.charger);
    expect(ix.keys.owner.pubkey.toBase58()).toBe(owner);
    expect(ix.data).toMatchObject({ amount: 120_000_000n, decimals: 6 });

    // Landed but not final: the allowance reads at once; the authorization only once finalized.
    expect(await f.adapter.getAllowance('USDT', owner, w.charger)).toBe(120_000_000n);
    expect(await f.adapter.readApproval('USDT', owner, w.charger)).toBeNull();
    f.rpc.validator.advanceSlots(33);
    expect(await f.adapter.readApproval('USDT', owner, w.charger)).toMatchObject({
      txHash: approveSig,
      logIndex: 0,
      token: 'USDT',
      tokenContract: f.mints.USDT,
      owner,
      spender: w.charger,
      value: 120_000_000n,
    });
    expect(await f.adapter.readApproval('USDT', owner, Keypair.generate().publicKey.toBase58())).toBeNull();

    await f.settle();
    let s = (await f.client.get(`/api/v1/subscriptions/${sub.id}?expand=latest_invoice&expand=payment_method`)).json;
    expect(s.status).toBe('active');
    expect(s.latest_invoice_object).toMatchObject({ status: 'paid', amount_due: 1000, amount_paid: 1000, currency: 'USD' });
    expect(s.current_period_end).toBe(Date.parse('2027-02-28T10:00:00Z') / 1000);
    const pm = await f.client.get(`/api/v1/payment_method/${s.payment_method_id}`);
    expect(pm.status).toBe(200);
    expect(pm.json).toMatchObject({
      customer_id: 'cus_life',
      merchant_id: f.merchantId,
      type: 'crypto_wallet',
      status: 'active',
      metadata: { network: 'solana', token: 'USDT' },
    });
    const pmRow = await f.h.t.db
      .selectFrom('payment_methods')
      .select(['approval_tx_hash', 'owner_address', 'spender_address'])
      .where('id', '=', s.payment_method_id)
      .executeTakeFirstOrThrow();
    expect(pmRow).toEqual({ approval_tx_hash: approveSig, owner_address: owner, spender_address: w.charger });

    // On chain: 10 USDT from the customer's ATA to the settlement wallet's ATA (created by the charger).
    expect(await f.tokenBalance(f.mints.USDT, owner)).toBe(100_000_000n - PERIOD);
    expect(await f.tokenBalance(f.mints.USDT, w.settlement)).toBe(PERIOD);
    const charges = await f.h.t.db
      .selectFrom('subscription_charges')
      .selectAll()
      .where('subscription_id', '=', sub.id)
      .orderBy('id')
      .execute();
    expect(charges.map((c) => [c.state, c.charger_address, c.destination_address])).toEqual([['succeeded', w.charger, w.settlement]]);
    const first = await f.conn.getTransaction(charges[0]!.tx_hash!, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(first?.transaction.message.staticAccountKeys[0]!.toBase58()).toBe(w.charger); // fee payer: the charger
    expect(first?.meta?.err).toBeNull();
    // The credited transfer, named as the deposit scanner names every Solana transfer: by the credited token account's
    // index in the transaction (the settlement wallet's ATA, TransferChecked's third account), not by the instruction's
    // position (they differ here: the compute-budget and create-ATA instructions come first); then the amount, the
    // mint, the slot and its blockhash.
    const keys = first!.transaction.message.staticAccountKeys.map((k) => k.toBase58());
    const transferIndex = first!.transaction.message.compiledInstructions.findIndex(
      (i) => keys[i.programIdIndex] === TOKEN_PROGRAM_ID.toBase58() && i.data[0] === 12,
    );
    expect(transferIndex).toBeGreaterThan(0);
    const creditedIndex = first!.transaction.message.compiledInstructions[transferIndex]!.accountKeyIndexes[2]!;
    expect(keys[creditedIndex]).toBe(
      getAssociatedTokenAddressSync(new PublicKey(f.mints.USDT), new PublicKey(w.settlement), true).toBase58(),
    );
    expect(first!.meta!.postTokenBalances!.find((b) => b.accountIndex === creditedIndex)?.owner).toBe(w.settlement);
    expect(creditedIndex).not.toBe(transferIndex);
    const block = await f.conn.getBlock(first!.slot, {
      commitment: 'confirmed',
      transactionDetails: 'none',
      rewards: false,
      maxSupportedTransactionVersion: 0,
    });
    const deposit = await f.h.t.db.selectFrom('deposits').selectAll().where('tx_hash', '=', charges[0]!.tx_hash!).executeTakeFirstOrThrow();
    expect(deposit).toMatchObject({
      log_index: creditedIndex,
      token_contract: f.mints.USDT,
      from_address: owner,
      to_address: w.settlement,
      block_number: BigInt(first!.slot),
      block_hash: block!.blockhash,
    });
    expect(BigInt(deposit.amount_base)).toBe(PERIOD);

    // Renewal: the clock passes the period end.
    f.clock.set(new Date(s.current_period_end * 1000 + 1000));
    await f.settle();
    await f.settle(); // idempotent: nothing more happens
    s = (await f.client.get(`/api/v1/subscriptions/${sub.id}?expand=latest_invoice`)).json;
    expect(s.status).toBe('active');
    expect(s.latest_invoice_object).toMatchObject({ status: 'paid', amount_paid: 1000 });
    expect(s.current_period_end).toBe(Date.parse('2027-03-31T10:00:00Z') / 1000);
    expect(await f.tokenBalance(f.mints.USDT, owner)).toBe(100_000_000n - 2n * PERIOD);
    expect(await f.tokenBalance(f.mints.USDT, w.settlement)).toBe(2n * PERIOD);
    const acc = await getAccount(f.conn, customerAta, 'confirmed');
    expect(acc.delegate?.toBase58()).toBe(w.charger);
    expect(acc.delegatedAmount).toBe(120_000_000n - 2n * PERIOD);
    expect(await f.adapter.getAllowance('USDT', owner, w.charger)).toBe(120_000_000n - 2n * PERIOD);
    const paid = (await f.client.get(`/api/v1/invoices?subscription_id=${sub.id}&limit=10`)).json.data;
    expect(paid.map((i: { status: string }) => i.status)).toEqual(['paid', 'paid']);

    // The customer approves another delegate on the same token account (a DEX order, another service): ours is gone.
    const other = Keypair.generate().publicKey.toBase58();
    await f.approve(customer, other, 5_000_000n);
    f.rpc.validator.advanceSlots(33);
    expect(await f.adapter.getAllowance('USDT', owner, w.charger)).toBe(0n);
    expect(await f.adapter.getAllowance('USDT', owner, other)).toBe(5_000_000n);
    const chargerLamports = await f.conn.getBalance(new PublicKey(w.charger), 'confirmed');
    const chargerTxs = (await f.conn.getSignaturesForAddress(new PublicKey(w.charger), { limit: 1000 }, 'confirmed')).length;
    f.clock.set(new Date(s.current_period_end * 1000 + 1000));
    await f.settle();
    s = (await f.client.get(`/api/v1/subscriptions/${sub.id}?expand=latest_invoice`)).json;
    expect(s.status).toBe('past_due');
    // The replaced delegation was noticed from the token account: the payment method is revoked.
    expect((await f.client.get(`/api/v1/payment_method/${s.payment_method_id}`)).json.status).toBe('revoked');
    expect(s.latest_invoice_object).toMatchObject({ status: 'open', amount_paid: 0 });
    const failed = await f.h.t.db
      .selectFrom('subscription_charges')
      .selectAll()
      .where('subscription_id', '=', sub.id)
      .orderBy('id')
      .execute();
    expect(failed.map((c) => c.state)).toEqual(['succeeded', 'succeeded', 'failed']);
    expect(failed[2]!.tx_hash).toBeNull();
    expect(failed[2]!.failure_reason).toMatch(/^insufficient_allowance/);
    expect(await f.conn.getBalance(new PublicKey(w.charger), 'confirmed')).toBe(chargerLamports);
    expect((await f.conn.getSignaturesForAddress(new PublicKey(w.charger), { limit: 1000 }, 'confirmed')).length).toBe(chargerTxs);
    expect(await f.tokenBalance(f.mints.USDT, owner)).toBe(100_000_000n - 2n * PERIOD);

    // The charge-side reads: an approve moved nothing (not a charge); a charge is final and moved PERIOD.
    expect(await f.adapter.getTransferFromOutcome(approveSig, owner)).toMatchObject({ status: 'failed', reason: 'no_transfer_event' });
    expect(await f.adapter.findChargeTransfer(approveSig, owner, w.settlement)).toBeNull();
    expect(await f.adapter.getTransferFromOutcome(charges[0]!.tx_hash!, owner)).toMatchObject({ status: 'succeeded', final: true });
    expect(await f.adapter.findChargeTransfer(charges[0]!.tx_hash!, owner, other)).toBeNull();
    await expect(
      f.adapter.buildTokenTransferFrom({ from: w.chargerKey, to: w.settlement, token: 'USDT', amount: PERIOD }, owner),
    ).rejects.toMatchObject({ reason: 'simulation_reverted' });

    expect(await f.events(sub.id)).toEqual([
      'subscription.created',
      'subscription.updated', // authorized: payment method attached
      ...PERIOD_EVENTS,
      ...PERIOD_EVENTS,
      'subscription.updated', // payment method revoked: another delegate named
      'invoice.created',
      'invoice.payment_failed',
      'subscription.past_due',
    ]);

    // The customer names our charger again from the wallet: the payment method is restored and the open invoice is
    // retried at once (the clock does not move to the scheduled retry).
    await f.approve(customer, w.charger, 50_000_000n);
    await f.settle();
    s = (await f.client.get(`/api/v1/subscriptions/${sub.id}?expand=latest_invoice`)).json;
    expect((await f.client.get(`/api/v1/payment_method/${s.payment_method_id}`)).json.status).toBe('active');
    expect(s.status).toBe('active');
    expect(s.latest_invoice_object).toMatchObject({ status: 'paid', amount_paid: 1000 });
    expect(await f.tokenBalance(f.mints.USDT, owner)).toBe(100_000_000n - 3n * PERIOD);
    expect((await f.events(sub.id)).slice(-3)).toEqual(['subscription.updated', 'invoice.paid', 'subscription.active']);
  }, 120_000);

  it('a charge signed but never sent (crash) whose blockhash expired is dropped, signed afresh after the pre-flight, and paid once', async () => {
    const customer = f.customer(50_000_000n);
    const owner = customer.publicKey.toBase58();
    const sub = await f.create({ ...plan({}, 1), customer: 'cus_sol_expired' });
    const info = await f.select(sub.id, owner);
    await f.approve(customer, info.spender, BigInt(info.allowance_base));
    f.rpc.validator.advanceSlots(33);
    // The worker dies between storing the signed charge and broadcasting it.
    const { pollApprovals } = await import('../../src/subscriptions/approval-poller.js');
    const { runSchedulerTick } = await import('../../src/subscriptions/scheduler.js');
    await pollApprovals(f.deps);
    await runSchedulerTick({
      ...f.deps,
      failpoint: (at) => {
        if (at === 'outbound:after_sign') throw new Error('crash after sign');
      },
    });
    const signed = await f.h.t.db
      .selectFrom('subscription_charges')
      .selectAll()
      .where('subscription_id', '=', sub.id)
      .executeTakeFirstOrThrow();
    expect(signed.state).toBe('signed');
    expect(await f.tokenBalance(f.mints.USDT, owner)).toBe(50_000_000n);

    // The blockhash dies before anyone re-sends the bytes: only now, proven unable to land, may the charge be signed again.
    f.rpc.validator.expireBlockhashes();
    await f.settle();
    const attempts = await f.h.t.db
      .selectFrom('subscription_charge_attempts')
      .selectAll()
      .where('charge_id', '=', signed.id)
      .orderBy('id')
      .execute();
    expect(attempts.map((a) => a.state)).toEqual(['dropped', 'live']);
    expect(attempts[0]!.tx_hash).toBe(signed.tx_hash);
    expect(attempts[0]!.dropped_reason).toMatch(/expired/);
    const charge = await f.h.t.db.selectFrom('subscription_charges').selectAll().where('id', '=', signed.id).executeTakeFirstOrThrow();
    expect(charge.state).toBe('succeeded');
    expect(charge.tx_hash).toBe(attempts[1]!.tx_hash);
    expect(await f.tokenBalance(f.mints.USDT, owner)).toBe(50_000_000n - PERIOD); // paid once
    expect(await f.conn.getSignatureStatus(signed.tx_hash!)).toMatchObject({ value: null });
    expect((await f.client.get(`/api/v1/subscriptions/${sub.id}`)).json.status).toBe('active');
  }, 120_000);
});
