import { Contract, type Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plan, startSubsFixture, type SubsFixture } from './subscriptions-fixture.js';

// The customer takes the authorization back, and gives it again: an Approval to 0 marks the payment method revoked
// (subscription.updated); the next renewal fails before any gas is spent and the subscription goes past_due; the
// page accepts a new authorization of a past_due subscription, which retries the open invoice at once. A new approve
// straight from the wallet (no page) restores the payment method too.

let f: SubsFixture;
const T0 = new Date('2027-10-01T00:00:00Z');
const DAY = 86_400_000;
beforeAll(async () => {
  f = await startSubsFixture({ start: T0 });
}, 120_000);
afterAll(async () => f?.close());

async function approve(wallet: Wallet, spender: string, value: bigint): Promise<void> {
  const c = new Contract(f.tokens.USDT.address, ['function approve(address spender, uint256 value)'], wallet);
  await (await (c.getFunction('approve') as (s: string, v: bigint) => Promise<{ wait(): Promise<unknown> }>)(spender, value)).wait();
}

async function activeDaily(index: number): Promise<{ id: string; customer: Wallet; pm: string; spender: string }> {
  const customer = await f.customer(index, 100_000_000n);
  const s = await f.create({ ...plan({ recurring: { interval: 'day' } }), customer: `cus_re_${index}` });
  const info = await f.authorize(s.id, customer);
  await f.settle();
  const sub = (await f.client.get(`/api/v1/subscriptions/${s.id}`)).json;
  expect(sub.status).toBe('active');
  return { id: s.id, customer, pm: sub.payment_method_id, spender: info.spender };
}

describe('revocation and re-authorization', () => {
  it('revoked → renewal refused before gas → past_due → authorized again from the page → retried at once → active', async () => {
    const { id, customer, pm, spender } = await activeDaily(400);
    await approve(customer, spender, 0n);
    await f.settle();
    const revoked = (await f.client.get(`/api/v1/payment_method/${pm}`)).json;
    expect(revoked.status).toBe('revoked');
    expect((await f.events(id)).slice(-1)).toEqual(['subscription.updated']);

    const w = await f.deps.walletResolver.wallets(f.merchantId, 'test', 'ethereum');
    const nonceBefore = await f.node.provider.getTransactionCount(w.charger);
    f.clock.set(new Date(T0.getTime() + DAY + 60_000));
    await f.settle();
    let sub = (await f.client.get(`/api/v1/subscriptions/${id}`)).json;
    expect(sub.status).toBe('past_due');
    expect((await f.client.get(`/api/v1/invoices/${sub.latest_invoice}`)).json).toMatchObject({ status: 'open', payment_status: 'failed' });
    expect(await f.node.provider.getTransactionCount(w.charger)).toBe(nonceBefore); // no gas spent on it
    const failure = await f.h.t.db
      .selectFrom('subscription_charges')
      .select('failure_reason')
      .where('subscription_id', '=', id)
      .where('state', '=', 'failed')
      .executeTakeFirstOrThrow();
    expect(failure.failure_reason).toMatch(/^insufficient_allowance/);

    // The page takes a new authorization while past_due; the retry runs now, not on day +1 of the schedule.
    const page = await fetch(`${f.h.baseUrl}/subscribe/${id}`);
    expect(await page.text()).toContain('authorize again');
    await f.authorize(id, customer);
    await f.settle();
    sub = (await f.client.get(`/api/v1/subscriptions/${id}?expand=payment_method`)).json;
    expect(sub.status).toBe('active');
    expect(sub.payment_method_id).not.toBe(pm);
    expect(sub.payment_method_object).toMatchObject({ id: sub.payment_method_id, status: 'active' });
    expect((await f.client.get(`/api/v1/invoices/${sub.latest_invoice}`)).json).toMatchObject({ status: 'paid', payment_status: 'paid' });
    expect(await f.node.provider.getTransactionCount(w.charger)).toBe(nonceBefore + 1);
    const evs = await f.events(id);
    expect(evs.slice(-7)).toEqual([
      'subscription.updated', // revoked
      'invoice.created',
      'invoice.payment_failed',
      'subscription.past_due',
      'subscription.updated', // new payment method
      'invoice.paid',
      'subscription.active',
    ]);
  }, 120_000);

  it('an approve straight from the wallet after a revocation restores the payment method with its new allowance', async () => {
    const { customer, pm, spender } = await activeDaily(401);
    await approve(customer, spender, 0n);
    await f.settle();
    expect((await f.client.get(`/api/v1/payment_method/${pm}`)).json.status).toBe('revoked');
    await approve(customer, spender, 50_000_000n);
    await f.settle();
    expect((await f.client.get(`/api/v1/payment_method/${pm}`)).json.status).toBe('active');
    const row = await f.h.t.db
      .selectFrom('payment_methods')
      .select(['allowance_base', 'revoked_at'])
      .where('id', '=', pm)
      .executeTakeFirstOrThrow();
    expect(row.allowance_base).toBe(50_000_000n);
    expect(row.revoked_at).toBeNull();
  }, 120_000);

  it('the page refuses a new authorization of a canceled subscription', async () => {
    const { id, customer } = await activeDaily(402);
    expect((await f.client.post(`/api/v1/subscriptions/${id}/cancel`, {})).status).toBe(200);
    const r = await fetch(`${f.h.baseUrl}/subscribe/${id}/select`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'ethereum', token: 'USDT', address: customer.address }),
    });
    expect(r.status).toBe(409);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('not_awaiting_authorization');
  }, 120_000);

  it('while paid up, the page takes a new authorization only from the same wallet', async () => {
    const { id, customer } = await activeDaily(403);
    const stranger = await f.customer(404, 0n);
    const select = (address: string) =>
      fetch(`${f.h.baseUrl}/subscribe/${id}/select`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ network: 'ethereum', token: 'USDT', address }),
      });
    const refused = await select(stranger.address);
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('wallet_change_not_allowed');
    const row = await f.h.t.db
      .selectFrom('subscriptions')
      .select(['auth_owner', 'auth_requested_at'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.auth_owner).toBe(customer.address.toLowerCase()); // nothing recorded for the stranger
    expect(row.auth_requested_at).toBeNull();
    expect((await select(customer.address)).status).toBe(200);
  }, 120_000);
});
