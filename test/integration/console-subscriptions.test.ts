import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import { insertSubscription, type NewSubscription } from '../../src/ledger/subscriptions/subscriptions.js';
import { startConsoleHarness, type ConsoleHarness } from '../support/console-harness.js';

// The console's subscriptions over a real database: list (keyset, filters, scope), detail (the API's serializer,
// invoices, charges, payment methods, hold), the merchant's cancel (the API's rules) and the operator's resolve.

let h: ConsoleHarness;
let a: { merchantId: string };
let b: { merchantId: string };

const audits = (action: string) => h.t.db.selectFrom('console_audit').selectAll().where('action', '=', action).orderBy('id').execute();

async function subscription(merchantId: string, id: string): Promise<void> {
  const s: NewSubscription = {
    id,
    merchantId,
    mode: 'test',
    customer: `cus_${id}`,
    customerEmail: 'c@example.com',
    customerPhone: null,
    customerName: null,
    currency: 'usd',
    description: null,
    priceId: 'price_1',
    product: 'Pro plan',
    unitAmountMinor: 999n,
    interval: 'month',
    quantity: 2,
    itemMetadata: {},
    successUrl: null,
    cancelUrl: null,
    trialEnd: null,
    billingCycleAnchor: null,
    cancelAt: null,
    iterations: null,
    metadata: {},
  };
  await h.t.db
    .transaction()
    .execute((trx) =>
      insertSubscription(trx, s, { clock: systemClock, incompleteExpiryMs: 3600_000, checkoutBaseUrl: 'http://checkout.test/pay' }),
    );
}

beforeAll(async () => {
  h = await startConsoleHarness();
  a = await h.merchant('Subs A');
  b = await h.merchant('Subs B');
  await subscription(a.merchantId, 'sub_a1');
  await subscription(a.merchantId, 'sub_a2');
  await subscription(b.merchantId, 'sub_b1');
  // sub_a2 is active with a period and held for an operator (a charge's tokens went to a wrong recipient).
  await h.t.db
    .updateTable('subscriptions')
    .set({
      status: 'active',
      current_period_start: new Date(),
      current_period_end: new Date(Date.now() + 30 * 86_400_000),
      hold_reason: 'wrong_recipient',
      held_at: new Date(),
      hold_tx_hash: '0xabc',
      next_action: null,
      next_action_at: null,
    })
    .where('id', '=', 'sub_a2')
    .execute();
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe('console subscriptions', () => {
  it('lists newest first with decimal amounts; pages by cursor; filters by status and hold; scopes merchant users', async () => {
    const p1 = await h.call(h.operator, 'GET', '/api/subscriptions?limit=2');
    expect(p1.status).toBe(200);
    expect(p1.json.data.map((s: { id: string }) => s.id)).toEqual(['sub_b1', 'sub_a2']);
    expect(p1.json.data[1]).toMatchObject({
      amount: '19.98',
      currency: 'usd',
      status: 'active',
      hold: { reason: 'wrong_recipient', transaction_hash: '0xabc' },
    });
    const p2 = await h.call(h.operator, 'GET', `/api/subscriptions?limit=2&cursor=${p1.json.next_cursor}`);
    expect(p2.json.data.map((s: { id: string }) => s.id)).toEqual(['sub_a1']);
    expect(p2.json.next_cursor).toBeNull();
    const held = await h.call(h.operator, 'GET', '/api/subscriptions?held=true');
    expect(held.json.data.map((s: { id: string }) => s.id)).toEqual(['sub_a2']);
    const incomplete = await h.call(h.operator, 'GET', `/api/subscriptions?status=incomplete&merchant_id=${a.merchantId}`);
    expect(incomplete.json.data.map((s: { id: string }) => s.id)).toEqual(['sub_a1']);
    const user = h.merchantUser(b.merchantId);
    expect((await h.call(user, 'GET', '/api/subscriptions')).json.data.map((s: { id: string }) => s.id)).toEqual(['sub_b1']);
    expect((await h.call(user, 'GET', `/api/subscriptions?merchant_id=${a.merchantId}`)).status).toBe(403);
    expect((await h.call(user, 'GET', '/api/subscriptions?status=paused')).status).toBe(400);
  });

  it('shows a subscription through the API serializer with invoices, charges, payment methods and its hold', async () => {
    const r = await h.call(h.merchantUser(a.merchantId), 'GET', '/api/subscriptions/sub_a2');
    expect(r.status).toBe(200);
    expect(r.json.subscription).toMatchObject({
      id: 'sub_a2',
      object: 'subscription',
      status: 'active',
      operator_hold: { reason: 'wrong_recipient' },
    });
    expect(r.json).toMatchObject({
      merchant_id: a.merchantId,
      mode: 'test',
      invoices: [],
      charges: [],
      payment_methods: [],
      hold: { reason: 'wrong_recipient' },
    });
    expect((await h.call(h.merchantUser(b.merchantId), 'GET', '/api/subscriptions/sub_a2')).status).toBe(403);
    expect((await h.call(h.operator, 'GET', '/api/subscriptions/sub_none')).status).toBe(404);
  });

  it("cancels by the API's rules: another merchant refused (403, unchanged), bad input 400, audit row", async () => {
    expect((await h.call(h.merchantUser(b.merchantId), 'POST', '/api/subscriptions/sub_a1/cancel', {})).status).toBe(403);
    expect((await h.call(h.merchantUser(a.merchantId), 'POST', '/api/subscriptions/sub_a1/cancel', { reason: 'bored' })).status).toBe(400);
    const noPeriod = await h.call(h.merchantUser(a.merchantId), 'POST', '/api/subscriptions/sub_a1/cancel', { at_period_end: true });
    expect(noPeriod.status).toBe(400);
    expect(noPeriod.json.error.param).toBe('at_period_end');
    const s0 = await h.t.db.selectFrom('subscriptions').select('status').where('id', '=', 'sub_a1').executeTakeFirstOrThrow();
    expect(s0.status).toBe('incomplete');
    const r = await h.call(h.merchantUser(a.merchantId), 'POST', '/api/subscriptions/sub_a1/cancel', { reason: 'customer_request' });
    expect(r.status).toBe(200);
    expect(r.json.subscription).toMatchObject({ status: 'canceled', cancellation_details: { reason: 'customer_request' } });
    expect((await audits('subscription.cancel')).at(-1)).toMatchObject({
      object_id: 'sub_a1',
      merchant_id: a.merchantId,
      before: { status: 'incomplete' },
      after: { status: 'canceled' },
    });
    const again = await h.call(h.merchantUser(a.merchantId), 'POST', '/api/subscriptions/sub_a1/cancel', {});
    expect(again.status).toBe(400);
    expect(again.json.error.code).toBe('subscription_not_cancelable');
  });

  it('resolves a hold (operator only): retry releases it and schedules the charge; not held answers 400', async () => {
    expect((await h.call(h.merchantUser(a.merchantId), 'POST', '/api/subscriptions/sub_a2/resolve', { action: 'retry' })).status).toBe(403);
    expect((await h.call(h.operator, 'POST', '/api/subscriptions/sub_a2/resolve', { action: 'later' })).status).toBe(400);
    const held = await h.t.db.selectFrom('subscriptions').select('hold_reason').where('id', '=', 'sub_a2').executeTakeFirstOrThrow();
    expect(held.hold_reason).toBe('wrong_recipient');
    const r = await h.call(h.operator, 'POST', '/api/subscriptions/sub_a2/resolve', { action: 'retry' });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ hold: null, next_action: 'retry', subscription: { status: 'active', operator_hold: null } });
    expect((await audits('subscription.resolve')).at(-1)).toMatchObject({
      object_id: 'sub_a2',
      before: { hold: { reason: 'wrong_recipient', transaction_hash: '0xabc' } },
      after: { resolution: 'retry', hold_reason: null },
    });
    const again = await h.call(h.operator, 'POST', '/api/subscriptions/sub_a2/resolve', { action: 'cancel' });
    expect(again.status).toBe(400);
    expect(again.json.error.code).toBe('subscription_not_held');
  });
});
