import { Contract } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/domain/subscription-periods.js';
import { PERIOD_EVENTS, plan, startSubsFixture, type SubsFixture } from './subscriptions-fixture.js';

// Life-cycle variants on Anvil with the manual clock: trial, iterations, cancel at period end, immediate cancel,
// cancel_at, incomplete_expired after 23 hours, Tether's approve rule, an allowance too small.

let f: SubsFixture;
const T0 = new Date('2027-03-01T00:00:00Z');
const sec = (d: Date | number) => Math.floor((typeof d === 'number' ? d : d.getTime()) / 1000);
beforeAll(async () => {
  f = await startSubsFixture({ start: T0 });
}, 120_000);
afterAll(async () => f?.close());

const get = async (id: string) => (await f.client.get(`/api/v1/subscriptions/${id}`)).json;
const at = async (d: Date | number) => {
  f.clock.set(typeof d === 'number' ? new Date(d) : d);
  await f.settle();
};

describe('variants', () => {
  it('trial: trialing until trial_end, then the first charge makes it active', async () => {
    f.clock.set(T0);
    const customer = await f.customer(31, 50_000_000n);
    const trialEnd = sec(T0) + 7 * 86400;
    const sub = await f.create({ ...plan({ recurring: { interval: 'week' } }), trial_end: trialEnd });
    await f.authorize(sub.id, customer);
    await f.settle();
    let s = await get(sub.id);
    expect(s).toMatchObject({ status: 'trialing', current_period_end: trialEnd, latest_invoice: null });
    await at((trialEnd - 1) * 1000);
    expect((await get(sub.id)).status).toBe('trialing');
    await at(trialEnd * 1000);
    s = await get(sub.id);
    expect(s).toMatchObject({ status: 'active', current_period_start: trialEnd, current_period_end: trialEnd + 7 * 86400 });
    expect((await f.client.get(`/api/v1/invoices/${s.latest_invoice}`)).json).toMatchObject({
      status: 'paid',
      billing_reason: 'subscription_cycle',
    });
    expect(await f.events(sub.id)).toEqual(['subscription.created', 'subscription.trialing', ...PERIOD_EVENTS]);
  });

  it('iterations: 2 ends after two paid periods; the allowance asked is two periods', async () => {
    f.clock.set(T0);
    const customer = await f.customer(32, 60_000_000n); // exactly two periods of $30
    const sub = await f.create({ ...plan({ recurring: { interval: 'day' } }, 3), iterations: 2 });
    const info = await f.authorize(sub.id, customer);
    expect(info.allowance_base).toBe(String(1000n * 3n * 2n * 10_000n));
    await f.settle();
    await at(T0.getTime() + DAY_MS);
    expect((await get(sub.id)).status).toBe('active');
    await at(T0.getTime() + 2 * DAY_MS);
    const s = await get(sub.id);
    expect(s).toMatchObject({ status: 'canceled', canceled_at: sec(T0) + 2 * 86400 });
    const invoices = await f.client.get(`/api/v1/invoices?subscription_id=${sub.id}`);
    expect(invoices.json.data.map((i: { status: string; amount_paid: number }) => [i.status, i.amount_paid])).toEqual([
      ['paid', 3000],
      ['paid', 3000],
    ]);
    expect(await f.events(sub.id)).toEqual([
      'subscription.created',
      'subscription.updated',
      ...PERIOD_EVENTS,
      ...PERIOD_EVENTS,
      'subscription.canceled',
    ]);
  });

  it('cancel_at_period_end keeps it active until the period ends, then cancels without charging', async () => {
    f.clock.set(T0);
    const customer = await f.customer(33, 50_000_000n);
    const sub = await f.create(plan({ recurring: { interval: 'week' } }));
    await f.authorize(sub.id, customer);
    await f.settle();
    const end = (await get(sub.id)).current_period_end;
    f.clock.set(new Date(T0.getTime() + DAY_MS));
    const r = await f.client.post(`/api/v1/subscriptions/${sub.id}/cancel`, {
      cancel_at_period_end: true,
      cancellation_reason: 'customer_request',
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      status: 'active',
      cancel_at: end,
      canceled_at: null,
      current_period_end: end,
      cancel_at_period_end: true,
    });
    await at(end * 1000);
    expect(await get(sub.id)).toMatchObject({ status: 'canceled', canceled_at: end, cancellation_details: { reason: 'customer_request' } });
    expect((await f.client.get(`/api/v1/invoices?subscription_id=${sub.id}`)).json.data.length).toBe(1);
    expect(await f.events(sub.id)).toEqual([
      'subscription.created',
      'subscription.updated',
      ...PERIOD_EVENTS,
      'subscription.updated',
      'subscription.canceled',
    ]);
  });

  it('immediate cancel of an active subscription stops every later charge', async () => {
    f.clock.set(T0);
    const customer = await f.customer(34, 50_000_000n);
    const sub = await f.create(plan({ recurring: { interval: 'day' } }));
    await f.authorize(sub.id, customer);
    await f.settle();
    const r = await f.client.post(`/api/v1/subscriptions/${sub.id}/cancel`, {});
    expect(r.json).toMatchObject({ status: 'canceled', cancel_at: null, canceled_at: sec(T0) });
    await at(T0.getTime() + 3 * DAY_MS);
    expect((await f.client.get(`/api/v1/invoices?subscription_id=${sub.id}`)).json.data.length).toBe(1);
    expect((await f.events(sub.id)).at(-1)).toBe('subscription.canceled');
  });

  it('cancel_at ends it on time, mid-period', async () => {
    f.clock.set(T0);
    const customer = await f.customer(35, 50_000_000n);
    const cancelAt = sec(T0) + 2 * 86400 + 3600;
    const sub = await f.create({ ...plan({ recurring: { interval: 'day' } }), cancel_at: cancelAt });
    expect(sub.cancel_at).toBe(cancelAt);
    await f.authorize(sub.id, customer);
    await f.settle();
    await at(T0.getTime() + 2 * DAY_MS);
    expect((await get(sub.id)).status).toBe('active');
    await at(cancelAt * 1000);
    expect(await get(sub.id)).toMatchObject({ status: 'canceled', canceled_at: cancelAt });
    expect((await f.client.get(`/api/v1/invoices?subscription_id=${sub.id}`)).json.data.length).toBe(3);
  });

  it('incomplete_expired 23 hours after creation without an authorization', async () => {
    f.clock.set(T0);
    const sub = await f.create(plan());
    await at(T0.getTime() + 23 * 3600_000 - 1000);
    expect((await get(sub.id)).status).toBe('incomplete');
    await at(T0.getTime() + 23 * 3600_000);
    expect((await get(sub.id)).status).toBe('incomplete_expired');
    expect(await f.events(sub.id)).toEqual(['subscription.created', 'subscription.incomplete_expired']);
    const sel = await fetch(`${f.h.baseUrl}/subscribe/${sub.id}/select`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'ethereum', token: 'USDT', address: '0x000000000000000000000000000000000000dEaD' }),
    });
    expect(sel.status).toBe(409);
  });

  it('Tether-style approve: an existing non-zero allowance is reset to 0 first; a too small approval does not authorize', async () => {
    f.clock.set(T0);
    const customer = await f.customer(36, 50_000_000n);
    const sub = await f.create(plan());
    const w = await f.deps.walletResolver.wallets(f.merchantId, 'test', 'ethereum');
    const usdt = new Contract(f.tokens.USDT.address, ['function approve(address spender, uint256 value)'], customer);
    const approve = usdt.getFunction('approve') as (s: string, v: bigint) => Promise<{ wait(): Promise<unknown> }>;
    // A small allowance already there (say, from an earlier plan), and seen by the poller: too small, no authorization.
    const sel = await fetch(`${f.h.baseUrl}/subscribe/${sub.id}/select`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'ethereum', token: 'USDT', address: customer.address }),
    });
    expect(sel.status).toBe(200);
    await (await approve(w.charger, 5n)).wait();
    await f.settle();
    expect((await get(sub.id)).status).toBe('incomplete');
    // Non-zero to non-zero is refused by the token itself.
    await expect(approve(w.charger, 10n)).rejects.toThrow();
    const info = await f.authorize(sub.id, customer);
    expect(info.reset_first).toBe(true);
    expect(info.current_allowance_base).toBe('5');
    await f.settle();
    expect((await get(sub.id)).status).toBe('active');
  });
});

describe('existing allowance', () => {
  it('an allowance that already covers the request authorizes at selection, without a new Approval', async () => {
    f.clock.set(T0);
    const customer = await f.customer(37, 50_000_000n);
    const w = await f.deps.walletResolver.wallets(f.merchantId, 'test', 'ethereum');
    const usdc = new Contract(
      f.tokens.USDC.address,
      ['function approve(address spender, uint256 value) returns (bool)', 'function mint(address,uint256)'],
      customer,
    );
    await (
      await (usdc.getFunction('approve') as (s: string, v: bigint) => Promise<{ wait(): Promise<unknown> }>)(w.charger, 10n ** 12n)
    ).wait();
    const { fund } = await import('../support/evm-tokens/scenario.js');
    await fund(f.tokens.USDC, customer.address, 50_000_000n);
    const sub = await f.create(plan());
    const sel = await fetch(`${f.h.baseUrl}/subscribe/${sub.id}/select`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'ethereum', token: 'USDC', address: customer.address }),
    });
    const info = (await sel.json()) as any;
    expect(info).toMatchObject({ authorized: true, reset_first: false, current_allowance_base: String(10n ** 12n) });
    await f.settle();
    const s = (await f.client.get(`/api/v1/subscriptions/${sub.id}?expand=payment_method`)).json;
    expect(s).toMatchObject({ status: 'active', payment_method_object: { type: 'crypto_wallet', status: 'active' } });
    expect((await f.client.get(`/api/v1/payment_method/${s.payment_method_id}`)).json.metadata).toEqual({
      network: 'ethereum',
      token: 'USDC',
    });
  });
});
