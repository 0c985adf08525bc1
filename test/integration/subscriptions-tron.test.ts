import { Contract, Interface, zeroPadValue } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tronBase58, tronToEvmHex } from '../../chains/tron/address.js';
import { DEFAULT_FEE_LIMIT_CEILING_SUN } from '../../chains/tron/config.js';
import { decodeTriggerRawData, txIdOf } from '../../chains/tron/protobuf.js';
import { TRANSFER_TOPIC } from '../../chains/evm/transfer-log.js';
import { isAllowanceCharger } from '../../chains/types.js';
import { PERIOD_EVENTS, TRX, startTronSubsFixture, type TronCustomer, type TronSubsFixture } from './subscriptions-tron-fixture.js';

// One subscription on TRON from authorization to its first renewal: the page's selection, an approve prepared by the
// adapter for the customer's wallet (signed with the customer key as TronLink signs, broadcast to the fake java-tron
// wallet API), the Approval log found over the JSON-RPC, charges by transferFrom sent and paid for by the merchant's
// charger, final from the solidified receipt; then a renewal refused before anything is broadcast.

const TXID = /^[0-9a-f]{64}$/;
const ERC20 = new Interface([
  'function approve(address spender, uint256 value)',
  'function transferFrom(address from, address to, uint256 value)',
]);
const USD10 = 10_000_000n;
const plan = (customer: string) => ({
  items: [
    {
      price_data: { price_id: 'price_m', currency: 'USD', product: 'Monthly', unit_amount: 1000, recurring: { interval: 'month' } },
      quantity: 1,
    },
  ],
  customer,
});

let f: TronSubsFixture;
beforeAll(async () => {
  f = await startTronSubsFixture({ start: new Date('2027-01-31T10:00:00Z') });
}, 120_000);
afterAll(async () => f?.close());

const balanceOf = async (who: string) => {
  const c = new Contract(f.tokens.USDT.address, ['function balanceOf(address) view returns (uint256)'], f.node.provider);
  return (await (c.getFunction('balanceOf') as (a: string) => Promise<bigint>)(tronToEvmHex(who))) as bigint;
};
/** USDT Transfer logs from one TRON address to another, read on the node. */
const transfers = async (from: string, to: string) => {
  const logs = await f.node.rpc<Array<{ data: string }>>('eth_getLogs', [
    {
      fromBlock: '0x0',
      toBlock: 'latest',
      address: f.tokens.USDT.address,
      topics: [TRANSFER_TOPIC, zeroPadValue(tronToEvmHex(from), 32), zeroPadValue(tronToEvmHex(to), 32)],
    },
  ]);
  return logs.map((l) => BigInt(l.data));
};
/** Transactions the fake java-tron executed or refused-on-chain whose owner is `owner`. */
const txsOf = (owner: string) => [...f.fake.chain.txs.values()].filter((t) => t.raw?.owner === owner);

describe('subscriptions on TRON', () => {
  it('is an allowance charger, but only with the wallet API configured', async () => {
    expect(isAllowanceCharger(f.adapter)).toBe(true);
    const { TronChainAdapter } = await import('../../chains/tron/adapter.js');
    const detectionOnly = new TronChainAdapter({ mode: 'test', jsonRpcUrl: f.node.url, tokens: f.adapter.tokens });
    expect(isAllowanceCharger(detectionOnly)).toBe(false); // the page offers no TRON option it could not charge
  });

  it('authorizes with a wallet-prepared approve, charges by transferFrom, renews once', async () => {
    const customer = await f.customer(31, { usdt: 100_000_000n }); // 100 USDT
    const sub = await f.create(plan('cus_tron'));
    expect(sub.status).toBe('incomplete');

    const { info, approvals, broadcasts } = await f.authorize(sub.id, customer);
    expect(info).toMatchObject({
      network: 'tron',
      token: 'USDT',
      spender: tronBase58(f.wallets.charger),
      allowance_base: '120000000',
      current_allowance_base: '0',
      reset_first: false,
      authorized: false,
      token_contract: tronBase58(f.adapter.tokens[0]!.address),
    });
    expect(info.chain_id).toBeUndefined();
    // The page prepares the same approve for TronLink (adapter.buildApprovalForWallet behind /select).
    expect(info.wallet_transactions).toHaveLength(1);
    expect(info.wallet_transactions[0].kind).toBe('tron');
    expect(decodeTriggerRawData(info.wallet_transactions[0].transaction.raw_data_hex)).toMatchObject({
      owner: customer.address,
      contract: f.adapter.tokens[0]!.address,
      data: ERC20.encodeFunctionData('approve', [tronToEvmHex(f.wallets.charger), 120_000_000n]).slice(2),
    });

    // The prepared transaction: java-tron's JSON, one TriggerSmartContract from the customer to USDT, approve(charger).
    expect(approvals).toHaveLength(1);
    const tx = approvals[0]!;
    expect(Object.keys(tx).sort()).toEqual(['raw_data', 'raw_data_hex', 'txID', 'visible']);
    expect(tx.visible).toBe(false);
    expect(tx.txID).toBe(txIdOf(tx.raw_data_hex));
    const raw = decodeTriggerRawData(tx.raw_data_hex);
    expect(raw).toMatchObject({ owner: customer.address, contract: f.adapter.tokens[0]!.address, callValue: 0n, contractCount: 1 });
    expect(raw.data).toBe(ERC20.encodeFunctionData('approve', [tronToEvmHex(f.wallets.charger), 120_000_000n]).slice(2));
    expect(raw.feeLimit).toBeGreaterThan(0n);
    expect(tx.raw_data.contract[0].parameter.value.owner_address).toBe(customer.address);
    // Broadcast signed by the customer's key; the fake checked the signature recovers to owner_address and ran it.
    expect(broadcasts[0]).toMatchObject({ result: true });
    expect(f.fake.chain.txs.get(tx.txID)).toMatchObject({ contractRet: 'SUCCESS' });
    expect(await f.adapter.getAllowance('USDT', customer.base58, f.wallets.charger)).toBe(120_000_000n);
    expect(f.fake.chain.account(customer.address)!.balanceSun).toBeLessThan(100n * TRX); // the customer paid the approve's energy

    // The Approval log over the JSON-RPC: canonical addresses, TRON-form hash.
    const head = await f.adapter.getHead();
    const seen = await f.adapter.scanApprovals(0n, head.latest, [f.wallets.charger]);
    expect(seen).toEqual([
      expect.objectContaining({
        token: 'USDT',
        tokenContract: f.adapter.tokens[0]!.address,
        owner: customer.address,
        spender: f.wallets.charger,
        value: 120_000_000n,
      }),
    ]);
    expect(seen[0]!.txHash).toMatch(TXID);
    expect(await f.adapter.scanApprovals(0n, head.latest, [customer.address])).toEqual([]);

    const chargerTrx = f.fake.chain.account(f.wallets.charger)!.balanceSun;
    await f.settle();

    let s = (await f.client.get(`/api/v1/subscriptions/${sub.id}?expand=latest_invoice&expand=payment_method`)).json;
    expect(s.status).toBe('active');
    expect(s.latest_invoice_object).toMatchObject({ status: 'paid', amount_due: 1000, amount_paid: 1000, currency: 'USD' });
    expect(s.current_period_end).toBe(Date.parse('2027-02-28T10:00:00Z') / 1000);
    const pm = await f.client.get(`/api/v1/payment_method/${s.payment_method_id}`);
    expect(pm.status).toBe(200);
    expect(pm.json).toMatchObject({
      customer_id: 'cus_tron',
      merchant_id: f.merchantId,
      type: 'crypto_wallet',
      status: 'active',
      metadata: { network: 'tron', token: 'USDT' },
    });

    // On chain: 10 USDT from the customer to the settlement wallet, by the charger's transferFrom, energy paid by it.
    expect(await transfers(customer.address, f.wallets.settlement)).toEqual([USD10]);
    expect(await balanceOf(customer.address)).toBe(90_000_000n);
    expect(await balanceOf(f.wallets.settlement)).toBe(USD10);
    expect(await f.adapter.getAllowance('USDT', customer.address, f.wallets.charger)).toBe(110_000_000n);
    const charges = txsOf(f.wallets.charger);
    expect(charges).toHaveLength(1);
    const charge = charges[0]!;
    expect(charge.contractRet).toBe('SUCCESS');
    expect(charge.raw!.contract).toBe(f.adapter.tokens[0]!.address);
    expect(charge.raw!.data).toBe(
      ERC20.encodeFunctionData('transferFrom', [customer.evm, tronToEvmHex(f.wallets.settlement), USD10]).slice(2),
    );
    expect(charge.raw!.feeLimit).toBeGreaterThan(0n);
    expect(f.fake.chain.account(f.wallets.charger)!.balanceSun).toBeLessThan(chargerTrx);
    const dep = await f.h.t.db.selectFrom('deposits').selectAll().where('tx_hash', '=', charge.txId).executeTakeFirstOrThrow();
    expect(dep).toMatchObject({
      network: 'tron',
      from_address: customer.address,
      to_address: f.wallets.settlement,
      token_contract: f.adapter.tokens[0]!.address,
      amount_base: USD10,
    });

    // The adapter's view of that charge.
    const outcome = await f.adapter.getTransferFromOutcome(charge.txId, customer.base58);
    expect(outcome).toMatchObject({ status: 'succeeded', final: true });
    expect(await f.adapter.getTransferFromOutcome(charge.txId, f.wallets.charger)).toMatchObject({
      status: 'failed',
      reason: 'no_transfer_event',
    });
    const found = await f.adapter.findChargeTransfer(charge.txId, customer.address, f.wallets.settlement);
    expect(found).toMatchObject({ amount: USD10, tokenContract: f.adapter.tokens[0]!.address, block: { height: charge.blockNumber } });
    expect(await f.adapter.findChargeTransfer(charge.txId, customer.address, f.wallets.charger)).toBeNull();

    // Renewal: the clock past the period end.
    f.clock.set(new Date(s.current_period_end * 1000 + 1000));
    await f.settle();
    await f.settle(); // idempotent: nothing more happens
    s = (await f.client.get(`/api/v1/subscriptions/${sub.id}?expand=latest_invoice`)).json;
    expect(s.status).toBe('active');
    expect(s.latest_invoice_object).toMatchObject({ status: 'paid', amount_paid: 1000 });
    expect((await f.client.get(`/api/v1/invoices/${s.latest_invoice}`)).json).toMatchObject({
      status: 'paid',
      billing_reason: 'subscription_cycle',
      amount_paid: 1000,
    });
    expect(s.current_period_end).toBe(Date.parse('2027-03-31T10:00:00Z') / 1000);
    expect(await transfers(customer.address, f.wallets.settlement)).toEqual([USD10, USD10]);
    expect(await balanceOf(customer.address)).toBe(80_000_000n);
    expect(txsOf(f.wallets.charger).map((t) => t.contractRet)).toEqual(['SUCCESS', 'SUCCESS']);
    const paid = await f.client.get(`/api/v1/invoices?subscription_id=${sub.id}&status=paid&limit=10`);
    expect(paid.json.data).toHaveLength(2);

    expect(await f.events(sub.id)).toEqual(['subscription.created', 'subscription.updated', ...PERIOD_EVENTS, ...PERIOD_EVENTS]);
    expect(f.fake.unhandled).toEqual([]);
  }, 120_000);

  it('refuses a renewal the wallet cannot pay before broadcasting anything (after resetting a smaller allowance)', async () => {
    const customer: TronCustomer = await f.customer(32, { usdt: 15_000_000n }); // one period and a half
    // A smaller allowance given earlier: Tether-style approve refuses non-zero to non-zero, the page asks for a reset.
    const early = await f.adapter.buildApprovalForWallet('USDT', customer.address, f.wallets.charger, 1_000_000n);
    const { TronWeb } = await import('tronweb');
    const tw = new TronWeb({ fullHost: f.fake.url });
    expect((await tw.trx.sendRawTransaction((await tw.trx.sign(early.transaction as any, customer.privateKey)) as any)).result).toBe(true);

    const sub = await f.create(plan('cus_tron_poor'));
    const { info, approvals } = await f.authorize(sub.id, customer);
    expect(info).toMatchObject({ current_allowance_base: '1000000', reset_first: true, allowance_base: '120000000' });
    // Only the reset is prepared while the old allowance stands; the approve comes from a second selection.
    expect(info.wallet_transactions.map((w: any) => decodeTriggerRawData(w.transaction.raw_data_hex).data)).toEqual([
      ERC20.encodeFunctionData('approve', [tronToEvmHex(f.wallets.charger), 0n]).slice(2),
    ]);
    expect(approvals.map((t) => decodeTriggerRawData(t.raw_data_hex).data)).toEqual([
      ERC20.encodeFunctionData('approve', [tronToEvmHex(f.wallets.charger), 0n]).slice(2),
      ERC20.encodeFunctionData('approve', [tronToEvmHex(f.wallets.charger), 120_000_000n]).slice(2),
    ]);
    for (const t of approvals) expect(f.fake.chain.txs.get(t.txID)?.contractRet).toBe('SUCCESS');
    // Each priced from its own dry run: the full approve is prepared only after the reset landed.
    const [reset, full] = approvals.map((t) => decodeTriggerRawData(t.raw_data_hex).feeLimit);
    expect(reset).toBeGreaterThan(0n);
    expect(reset).toBeLessThan(DEFAULT_FEE_LIMIT_CEILING_SUN);
    expect(full).toBeGreaterThan(0n);
    expect(full).toBeLessThan(DEFAULT_FEE_LIMIT_CEILING_SUN);
    await f.settle();
    let s = (await f.client.get(`/api/v1/subscriptions/${sub.id}`)).json;
    expect(s.status).toBe('active');
    expect(await transfers(customer.address, f.wallets.settlement)).toEqual([USD10]);

    const chargerTxs = txsOf(f.wallets.charger).length;
    const chargerTrx = f.fake.chain.account(f.wallets.charger)!.balanceSun;
    const broadcastsBefore = f.fake.calls.filter((c) => c.startsWith('wallet/broadcast')).length;
    f.clock.set(new Date(s.current_period_end * 1000 + 1000));
    await f.settle();
    s = (await f.client.get(`/api/v1/subscriptions/${sub.id}?expand=latest_invoice`)).json;
    expect(s.status).toBe('past_due');
    expect(s.latest_invoice_object).toMatchObject({ status: 'open' });
    const inv = (await f.client.get(`/api/v1/invoices/${s.latest_invoice}`)).json;
    expect(inv).toMatchObject({
      status: 'open',
      payment_status: 'failed',
      amount_remaining: 1000,
      attempt_count: 1,
      billing_reason: 'subscription_cycle',
    });
    // No transaction reached the node: nothing signed by the charger, no TRX burned, no broadcast at all.
    expect(txsOf(f.wallets.charger).length).toBe(chargerTxs);
    expect(f.fake.chain.account(f.wallets.charger)!.balanceSun).toBe(chargerTrx);
    expect(f.fake.calls.filter((c) => c.startsWith('wallet/broadcast')).length).toBe(broadcastsBefore);
    expect(await transfers(customer.address, f.wallets.settlement)).toEqual([USD10]);
    expect(await balanceOf(customer.address)).toBe(5_000_000n);
    expect(await f.events(sub.id)).toEqual([
      'subscription.created',
      'subscription.updated',
      ...PERIOD_EVENTS,
      'invoice.created',
      'invoice.payment_failed',
      'subscription.past_due',
    ]);
  }, 120_000);

  it('an allowance that covers the request but is not final yet: no immediate authorization; the poller applies its log once final', async () => {
    const customer: TronCustomer = await f.customer(33, { usdt: 50_000_000n });
    const { TronWeb } = await import('tronweb');
    const tw = new TronWeb({ fullHost: f.fake.url });
    const approve = await f.adapter.buildApprovalForWallet('USDT', customer.address, f.wallets.charger, 500_000_000n);
    const sent = (await tw.trx.sendRawTransaction((await tw.trx.sign(approve.transaction as any, customer.privateKey)) as any)) as any;
    expect(sent.result).toBe(true);
    // Seen at the head, not yet solidified.
    expect(await f.adapter.getAllowance('USDT', customer.address, f.wallets.charger)).toBe(500_000_000n);
    expect(await f.adapter.getAllowance('USDT', customer.address, f.wallets.charger, 'final')).toBe(0n);

    const sub = await f.create(plan('cus_tron_recent'));
    const sel = await fetch(`${f.h.baseUrl}/subscribe/${sub.id}/select`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'tron', token: 'USDT', address: customer.base58 }),
    });
    const info = (await sel.json()) as any;
    expect(info).toMatchObject({ authorized: false, reset_first: false, current_allowance_base: '500000000', allowance_base: '120000000' });
    expect(info.wallet_transactions).toBeUndefined(); // nothing for the wallet to sign: the approve is on its way to finality
    expect((await f.client.get(`/api/v1/subscriptions/${sub.id}`)).json.payment_method_id).toBeNull();

    await f.settle(); // final now: the Approval log authorizes, the first invoice is charged
    const s = (await f.client.get(`/api/v1/subscriptions/${sub.id}`)).json;
    expect(s.status).toBe('active');
    const pm = await f.h.t.db
      .selectFrom('payment_methods')
      .select('approval_tx_hash')
      .where('id', '=', s.payment_method_id)
      .executeTakeFirstOrThrow();
    expect(pm.approval_tx_hash.startsWith('allowance:')).toBe(false); // from the log, not from an allowance read
  }, 120_000);
});
