import { Contract } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceRefund } from '../../src/refunds/payout-engine.js';
import { DAY_MS } from '../../src/domain/subscription-periods.js';
import { signer } from '../support/evm-tokens/scenario.js';
import { PERIOD_EVENTS, plan, startSubsFixture, type SubsFixture } from './subscriptions-fixture.js';

// The whole life of a subscription on Anvil: authorization by an ERC-20 approve from the customer's wallet, charges
// by transferFrom from the merchant's charger, renewals by moving the injectable clock, dunning, cancellation;
// then the refund of one subscription payment by payment_id, paid from the settlement (refunds) wallet.

let f: SubsFixture;
beforeAll(async () => {
  f = await startSubsFixture({ start: new Date('2027-01-31T10:00:00Z') });
}, 120_000);
afterAll(async () => f?.close());

const balanceOf = async (token: string, who: string) => {
  const c = new Contract(token, ['function balanceOf(address) view returns (uint256)'], f.node.provider);
  return (await (c.getFunction('balanceOf') as (a: string) => Promise<bigint>)(who)) as bigint;
};

describe('whole life', () => {
  it('create → authorize → active → three renewals → empty wallet → past_due → retries → canceled', async () => {
    const customer = await f.customer(21, 100_000_000n); // 100 USDT
    const sub = await f.create(plan({}, 1));
    expect(sub.status).toBe('incomplete');
    const info = await f.authorize(sub.id, customer);
    expect(info).toMatchObject({ token: 'USDT', allowance_base: '120000000', reset_first: false, chain_id: '0x7a69' }); // $10 × 12 periods
    await f.settle();

    let s = (await f.client.get(`/api/v1/subscriptions/${sub.id}?expand=latest_invoice&expand=payment_method`)).json;
    expect(s.status).toBe('active');
    expect(s.latest_invoice_object).toMatchObject({ status: 'paid', amount_due: 1000, amount_paid: 1000, currency: 'USD' });
    expect(s.payment_method_object).toMatchObject({ id: s.payment_method_id, type: 'crypto_wallet', status: 'active' });
    expect(s.current_period_start).toBe(Date.parse('2027-01-31T10:00:00Z') / 1000);
    expect(s.current_period_end).toBe(Date.parse('2027-02-28T10:00:00Z') / 1000);

    const pm = await f.client.get(`/api/v1/payment_method/${s.payment_method_id}`);
    expect(pm.status).toBe(200);
    expect(pm.json).toMatchObject({
      customer_id: 'cus_life',
      merchant_id: f.merchantId,
      type: 'crypto_wallet',
      status: 'active',
      metadata: { network: 'ethereum', token: 'USDT' },
    });
    expect(pm.json.address).toBe(`${customer.address.slice(0, 6)}…${customer.address.slice(-4)}`);

    // Three renewals; month ends from one anchor (Jan 31 → Feb 28 → Mar 31 → Apr 30 → May 31).
    const ends = ['2027-03-31T10:00:00Z', '2027-04-30T10:00:00Z', '2027-05-31T10:00:00Z'];
    for (const end of ends) {
      f.clock.set(new Date(s.current_period_end * 1000 + 1000));
      await f.settle();
      await f.settle(); // idempotent: nothing more happens
      s = (await f.client.get(`/api/v1/subscriptions/${sub.id}`)).json;
      expect(s.status).toBe('active');
      expect(s.current_period_end).toBe(Date.parse(end) / 1000);
    }
    const w = await f.deps.walletResolver.wallets(f.merchantId, 'test', 'ethereum');
    expect(await balanceOf(f.tokens.USDT.address, w.settlement)).toBe(40_000_000n);
    expect(await balanceOf(f.tokens.USDT.address, customer.address)).toBe(60_000_000n);

    // The customer empties the wallet: the renewal fails before any gas is spent, then dunning 1, 3, 5 days.
    const sink = '0x000000000000000000000000000000000000dEaD';
    const usdt = new Contract(f.tokens.USDT.address, ['function transfer(address to, uint256 value)'], customer);
    await (
      await (usdt.getFunction('transfer') as (a: string, v: bigint) => Promise<{ wait(): Promise<unknown> }>)(sink, 60_000_000n)
    ).wait();
    const chargerNonce = await f.node.provider.getTransactionCount(w.charger);
    const failedAt = s.current_period_end * 1000 + 1000;
    f.clock.set(new Date(failedAt));
    await f.settle();
    s = (await f.client.get(`/api/v1/subscriptions/${sub.id}?expand=latest_invoice`)).json;
    expect(s.status).toBe('past_due');
    expect(s.latest_invoice_object.status).toBe('open');
    const inv = (await f.client.get(`/api/v1/invoices/${s.latest_invoice}`)).json;
    expect(inv).toMatchObject({
      status: 'open',
      payment_status: 'failed',
      amount_remaining: 1000,
      attempt_count: 1,
      billing_reason: 'subscription_cycle',
    });

    for (const [day, status] of [
      [1, 'past_due'],
      [3, 'past_due'],
      [5, 'canceled'],
    ] as const) {
      f.clock.set(new Date(failedAt + day * DAY_MS - 1000));
      await f.settle();
      expect((await f.client.get(`/api/v1/subscriptions/${sub.id}`)).json.status).toBe('past_due'); // not yet due
      f.clock.set(new Date(failedAt + day * DAY_MS));
      await f.settle();
      expect((await f.client.get(`/api/v1/subscriptions/${sub.id}`)).json.status).toBe(status);
    }
    expect(await f.node.provider.getTransactionCount(w.charger)).toBe(chargerNonce); // no gas wasted
    s = (await f.client.get(`/api/v1/subscriptions/${sub.id}`)).json;
    expect(s).toMatchObject({
      status: 'canceled',
      cancellation_details: { reason: 'payment_failed' },
      canceled_at: (failedAt + 5 * DAY_MS) / 1000,
    });
    expect((await f.client.get(`/api/v1/invoices/${s.latest_invoice}`)).json).toMatchObject({ status: 'uncollectible', attempt_count: 4 });

    expect(await f.events(sub.id)).toEqual([
      'subscription.created',
      'subscription.updated', // authorized: payment method attached
      ...PERIOD_EVENTS,
      ...PERIOD_EVENTS,
      ...PERIOD_EVENTS,
      ...PERIOD_EVENTS,
      'invoice.created',
      'invoice.payment_failed',
      'subscription.past_due',
      'invoice.payment_failed',
      'invoice.payment_failed',
      'invoice.payment_failed',
      'subscription.canceled',
    ]);

    // Invoices list by subscription, newest first, 5 of them; paid filter.
    const list = await f.client.get(`/api/v1/invoices?subscription_id=${sub.id}&limit=3`);
    expect(list.json.data.map((i: { status: string }) => i.status)).toEqual(['uncollectible', 'paid', 'paid']);
    expect(list.json.has_more).toBe(true);
    const next = await f.client.get(`/api/v1/invoices?subscription_id=${sub.id}&limit=3&starting_after=${list.json.data[2].id}`);
    expect(next.json.data.length).toBe(2);
    expect(next.json.has_more).toBe(false);
    const paid = await f.client.get(`/api/v1/invoices?customer=cus_life&status=paid&limit=100`);
    expect(paid.json.data.length).toBe(4);

    // The payment behind the first invoice, then its refund by payment_id, paid from the settlement wallet.
    const first = paid.json.data[3];
    const pay = await f.client.get(`/api/v1/payment/${first.payment_id}`);
    expect(pay.status).toBe(200);
    expect(pay.json).toMatchObject({
      id: first.payment_id,
      amount_total: 1000,
      currency: 'USD',
      payment_status: 'paid',
      subscription_id: sub.id,
      invoice_id: first.id,
      target_currency: 'USDT',
      target_amount_total: 1000,
      line_items: [{ price_data: { currency: 'USD', unit_amount: 1000, product_data: { name: 'Monthly' } }, quantity: 1 }],
    });
    const refund = await f.client.post('/api/v1/refunds/create', {
      payment_id: first.payment_id,
      refund_id: 'rf-sub-1',
      amount: 400,
      currency: 'USDT',
      reason: 'requested_by_customer',
    });
    expect(refund.status).toBe(201);
    expect(refund.json).toMatchObject({
      payment_id: first.payment_id,
      invoice_id: first.id,
      subscription_id: sub.id,
      amount: 400,
      status: 'pending',
    });
    expect(refund.json.session_id).toBeUndefined();
    const tooMuch = await f.client.post('/api/v1/refunds/create', {
      payment_id: first.payment_id,
      refund_id: 'rf-sub-2',
      amount: 601,
      currency: 'USDT',
    });
    expect(tooMuch.json.error.code).toBe('REFUND_AMOUNT_EXCEEDED');
    const engine = { db: f.h.t.db, adapters: f.deps.adapters, signer, stuckAfterMs: 60_000, feeBumpPercent: 25, pollMs: 50 };
    for (let i = 0; i < 50; i++) {
      const step = await advanceRefund(engine, refund.json.id);
      if (step.kind === 'done') break;
    }
    expect((await f.client.get('/api/v1/refunds/rf-sub-1')).json.status).toBe('completed');
    expect(await balanceOf(f.tokens.USDT.address, customer.address)).toBe(4_000_000n);
    expect(await balanceOf(f.tokens.USDT.address, w.settlement)).toBe(36_000_000n);
  }, 120_000);
});
