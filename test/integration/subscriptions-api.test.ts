import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import type { SignedClient } from '../support/signed-client.js';

// The subscription API over HTTP against a real server, Postgres and Redis: every endpoint and status code that
// does not need a chain (the chain-backed life cycle is in subscriptions-lifecycle.test.ts).

let h: ApiHarness;
let client: SignedClient;
let other: SignedClient;

const item = (over: Record<string, unknown> = {}) => ({
  price_data: {
    price_id: 'price_basic',
    currency: 'USD',
    product: 'Basic plan',
    unit_amount: 999,
    recurring: { interval: 'month' },
    ...over,
  },
  quantity: 2,
});
const body = (over: Record<string, unknown> = {}) => ({ items: [item()], customer: 'cus_1', ...over });
const future = (s: number) => Math.floor(Date.now() / 1000) + s;

beforeAll(async () => {
  h = await startApiHarness();
  client = (await h.merchant('Subs shop')).test;
  other = (await h.merchant('Other shop')).test;
});
afterAll(async () => h?.close());

describe('create', () => {
  it('creates an incomplete subscription with every field and a checkout_url', async () => {
    const r = await client.post(
      '/api/v1/subscriptions/create',
      body({
        customer_email: 'a@example.com',
        customer_name: 'Ann',
        customer_phone: '+100',
        description: 'd',
        metadata: { k: 'v' },
        success_url: 'https://shop.example/ok',
        cancel_url: 'https://shop.example/no',
        iterations: 3,
      }),
    );
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      object: 'subscription',
      customer: 'cus_1',
      currency: 'USD',
      status: 'incomplete',
      iterations: 3,
      cancel_at: null,
      canceled_at: null,
      payment_method_id: null,
      latest_invoice: null,
      metadata: { k: 'v' },
      items: [
        {
          price_data: {
            price_id: 'price_basic',
            currency: 'USD',
            product: 'Basic plan',
            unit_amount: 999,
            recurring: { interval: 'month' },
          },
          quantity: 2,
        },
      ],
    });
    expect(r.json.id).toMatch(/^sub_[0-9A-Za-z]{24}$/);
    expect(r.json.checkout_url).toBe(`http://checkout.test/subscribe/${r.json.id}`);
    const events = await h.t.db.selectFrom('outbox_events').select(['type', 'payload']).where('aggregate_id', '=', r.json.id).execute();
    expect(events.map((e) => e.type)).toEqual(['subscription.created']);
    expect((events[0]!.payload as any).data.object).toMatchObject({
      subscription_id: r.json.id,
      customer_id: 'cus_1',
      status: 'incomplete',
      checkout_url: r.json.checkout_url,
      items: [{ price_id: 'price_basic', quantity: 2, amount: 999, interval: 'month', interval_count: 1 }],
    });
  });

  it('refuses bad input with the spec codes, never a 500', async () => {
    const cases: Array<[unknown, number, string, string?]> = [
      [body({ colour: 'red' }), 400, 'parameter_unknown', 'colour'],
      [body({ items: [item(), item()] }), 400, 'parameter_invalid', 'items'],
      [body({ items: [] }), 400, 'parameter_invalid', 'items'],
      [body({ cancel_at: future(86400 * 40), iterations: 2 }), 400, 'parameter_invalid', 'cancel_at'],
      [body({ trial_end: future(-10) }), 400, 'parameter_invalid', 'trial_end'],
      [body({ items: [item({ currency: 'EUR' })] }), 400, 'parameter_invalid', 'items[0][price_data][currency]'],
      [body({ items: [item({ unit_amount: -1 })] }), 400, 'INVALID_AMOUNT', 'items[0][price_data][unit_amount]'],
      [body({ items: [item({ unit_amount: '9.99' })] }), 400, 'INVALID_AMOUNT', 'items[0][price_data][unit_amount]'],
      [body({ items: [item({ recurring: { interval: 'fortnight' } })] }), 400, 'parameter_invalid'],
      [body({ items: [{ ...item(), quantity: 0 }] }), 400, 'parameter_invalid'],
      [{ items: [item()] }, 400, 'parameter_missing', 'customer'],
      [body({ iterations: 0 }), 400, 'parameter_invalid', 'iterations'],
      [body({ customer_email: 'nope' }), 400, 'parameter_invalid', 'customer_email'],
      [body({ items: [item({ unit_amount: 1e20 })] }), 400, 'INVALID_AMOUNT'],
      [body({ metadata: { k: 1 } }), 400, 'parameter_invalid'],
      ['[1]', 400, 'INVALID_JSON'],
      ['{"items":', 400, 'INVALID_JSON'],
    ];
    for (const [b, status, code, param] of cases) {
      const r = await client.post('/api/v1/subscriptions/create', b as Record<string, unknown>);
      expect({ b, status: r.status, code: r.json?.error?.code }).toEqual({ b, status, code });
      if (param) expect(r.json.error.param).toBe(param);
      expect(r.json.request_id).toMatch(/^req_/);
    }
  });

  it('replays with the same Idempotency-Key and body, 409 with another body', async () => {
    const headers = { 'Idempotency-Key': 'idem-1' };
    const a = await client.post('/api/v1/subscriptions/create', body({ customer: 'cus_idem' }), { headers });
    const b = await client.post('/api/v1/subscriptions/create', body({ customer: 'cus_idem' }), { headers });
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.json.id).toBe(a.json.id);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    const c = await client.post('/api/v1/subscriptions/create', body({ customer: 'cus_other' }), { headers });
    expect(c.status).toBe(409);
    expect(c.json.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
    // Concurrent twins with one key create one subscription.
    const twins = await Promise.all(
      [1, 2, 3].map(() =>
        client.post('/api/v1/subscriptions/create', body({ customer: 'cus_twin' }), { headers: { 'Idempotency-Key': 'idem-twin' } }),
      ),
    );
    expect(twins.map((t) => t.status)).toEqual([200, 200, 200]);
    expect(new Set(twins.map((t) => t.json.id)).size).toBe(1);
  });
});

describe('get, expand, cancel', () => {
  it('gets with expand as string, array and comma list; 404 for unknown and for another merchant', async () => {
    const s = (await client.post('/api/v1/subscriptions/create', body({ customer: 'cus_x', customer_email: 'x@example.com' }))).json;
    const plain = await client.get(`/api/v1/subscriptions/${s.id}`);
    expect(plain.status).toBe(200);
    expect(plain.json.latest_invoice_object).toBeUndefined();
    const e1 = await client.get(`/api/v1/subscriptions/${s.id}?expand=latest_invoice&expand=payment_method&expand=customer`);
    expect(e1.json).toMatchObject({
      latest_invoice_object: null,
      payment_method_object: null,
      customer_object: { id: 'cus_x', email: 'x@example.com' },
    });
    const e2 = await client.get(`/api/v1/subscriptions/${s.id}?expand[]=customer`);
    expect(e2.json.customer_object.id).toBe('cus_x');
    const e3 = await client.get(`/v1/subscriptions/${s.id}?expand=latest_invoice,customer`);
    expect(e3.json.latest_invoice_object).toBeNull();
    expect((await client.get(`/api/v1/subscriptions/${s.id}?expand=everything`)).json.error.code).toBe('parameter_invalid');
    expect((await client.get(`/api/v1/subscriptions/${s.id}?colour=1`)).json.error.code).toBe('parameter_unknown');
    const missing = await client.get('/api/v1/subscriptions/sub_000000000000000000000000');
    expect(missing.status).toBe(404);
    expect(missing.json.error).toMatchObject({ code: 'resource_not_found', param: 'subscription_id' });
    expect((await other.get(`/api/v1/subscriptions/${s.id}`)).status).toBe(404);
    expect((await client.get('/api/v1/subscriptions/%00')).status).toBe(404);
  });

  it('cancels now with reason and comment; a second cancel is refused; at period end needs a period', async () => {
    const s = (await client.post('/api/v1/subscriptions/create', body({ customer: 'cus_cancel' }))).json;
    const noPeriod = await client.post(`/api/v1/subscriptions/${s.id}/cancel`, { cancel_at_period_end: true });
    expect(noPeriod.status).toBe(400);
    expect(noPeriod.json.error.param).toBe('cancel_at_period_end');
    expect((await client.post(`/api/v1/subscriptions/${s.id}/cancel`, { cancellation_reason: 'bored' })).json.error).toMatchObject({
      code: 'parameter_invalid',
      param: 'cancellation_reason',
    });
    expect((await client.post(`/api/v1/subscriptions/${s.id}/cancel`, { nope: 1 })).json.error.code).toBe('parameter_unknown');
    const r = await client.post(`/api/v1/subscriptions/${s.id}/cancel`, {
      cancellation_reason: 'customer_request',
      cancellation_comment: 'too expensive',
    });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json)).toEqual(
      expect.arrayContaining(['id', 'object', 'status', 'cancel_at', 'canceled_at', 'current_period_end', 'updated']),
    );
    expect(r.json).toMatchObject({
      id: s.id,
      object: 'subscription',
      status: 'canceled',
      cancel_at: null,
      cancellation_details: { reason: 'customer_request', comment: 'too expensive' },
    });
    expect(r.json.canceled_at).toBeGreaterThan(0);
    const again = await client.post(`/api/v1/subscriptions/${s.id}/cancel`, {});
    expect(again.status).toBe(400);
    expect(again.json.error.code).toBe('subscription_not_cancelable');
    expect((await client.post('/api/v1/subscriptions/sub_000000000000000000000000/cancel', {})).status).toBe(404);
    expect((await other.post(`/api/v1/subscriptions/${s.id}/cancel`, {})).status).toBe(404);
    const types = (await h.t.db.selectFrom('outbox_events').select('type').where('aggregate_id', '=', s.id).orderBy('seq').execute()).map(
      (e) => e.type,
    );
    expect(types).toEqual(['subscription.created', 'subscription.canceled']);
  });

  it('replays a cancel with the same Idempotency-Key and body; another body with that key is 409', async () => {
    const s = (await client.post('/api/v1/subscriptions/create', body({ customer: 'cus_cancel_idem' }))).json;
    const headers = { 'idempotency-key': `cancel-${s.id}` };
    const first = await client.post(`/api/v1/subscriptions/${s.id}/cancel`, { cancellation_reason: 'other' }, { headers });
    expect(first.status).toBe(200);
    expect(first.json.status).toBe('canceled');
    const retry = await client.post(`/api/v1/subscriptions/${s.id}/cancel`, { cancellation_reason: 'other' }, { headers });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.json).toEqual(first.json);
    const changed = await client.post(`/api/v1/subscriptions/${s.id}/cancel`, { cancellation_reason: 'fraud' }, { headers });
    expect(changed.status).toBe(409);
    expect(changed.json.error.code).toBe('idempotency_key_reused');
    expect((await client.post(`/api/v1/subscriptions/${s.id}/cancel`, {})).json.error.code).toBe('subscription_not_cancelable');
    const events = await h.t.db.selectFrom('outbox_events').select('type').where('aggregate_id', '=', s.id).execute();
    expect(events.filter((e) => e.type === 'subscription.canceled')).toHaveLength(1);
  });
});

describe('invoices, payments, payment methods', () => {
  it('answers 404 in the full shape and lists with filters and url', async () => {
    const inv = await client.get('/api/v1/invoices/in_000000000000000000000000');
    expect(inv.status).toBe(404);
    expect(inv.json.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_not_found', param: 'invoice_id' });
    expect((await client.get('/api/v1/payment/pay_000000000000000000000000')).json.error).toMatchObject({
      code: 'resource_not_found',
      param: 'payment_id',
    });
    expect((await client.get('/api/v1/payment/cs_whatever')).status).toBe(404);
    expect((await client.get('/api/v1/payment_method/pm_000000000000000000000000')).json.error).toMatchObject({
      code: 'resource_not_found',
      param: 'payment_method_id',
    });
    const list = await client.get('/api/v1/invoices?status=paid&limit=5&customer=cus_1');
    expect(list.status).toBe(200);
    expect(list.json).toEqual({ object: 'list', data: [], has_more: false, url: '/api/v1/invoices?status=paid&limit=5&customer=cus_1' });
    expect((await client.get('/api/v1/invoices?status=weird')).json.error.code).toBe('parameter_invalid');
    expect((await client.get('/api/v1/invoices?limit=101')).json.error).toMatchObject({ code: 'parameter_invalid', param: 'limit' });
    expect((await client.get('/api/v1/invoices?starting_after=in_nope')).json.error).toMatchObject({
      code: 'parameter_invalid',
      param: 'starting_after',
    });
  });

  it('refund by an unknown payment_id is SESSION_NOT_FOUND', async () => {
    const r = await client.post('/api/v1/refunds/create', {
      payment_id: 'pay_000000000000000000000000',
      refund_id: 'r1',
      amount: 100,
      currency: 'USDT',
    });
    expect(r.status).toBe(404);
    expect(r.json.error).toMatchObject({ code: 'SESSION_NOT_FOUND', param: 'payment_id' });
  });
});

describe('list', () => {
  it('validates its query', async () => {
    for (const q of [
      'limit=0',
      'limit=101',
      'limit=abc',
      'status=gone',
      'colour=1',
      'starting_after=sub_x&ending_before=sub_y',
      'starting_after=sub_000000000000000000000000',
    ]) {
      const r = await client.get(`/api/v1/subscriptions?${q}`);
      expect({ q, status: r.status }).toEqual({ q, status: 400 });
      expect(r.json.error.code).toMatch(/^parameter_(invalid|unknown)$/);
    }
    const r = await client.get('/api/v1/subscriptions/?limit=1&status=canceled');
    expect(r.status).toBe(200);
    expect(r.json.url).toBe('/api/v1/subscriptions/?limit=1&status=canceled');
    expect(r.json.data.every((s: { status: string }) => s.status === 'canceled')).toBe(true);
  });

  it('pages 250 subscriptions forward and back while new ones are created: no duplicate, no gap, has_more right', async () => {
    const m = await h.merchant('Pager');
    const c = m.test;
    const created: string[] = [];
    for (let i = 0; i < 250; i += 25) {
      const batch = await Promise.all(
        Array.from({ length: 25 }, (_, j) => c.post('/api/v1/subscriptions/create', body({ customer: `cus_${(i + j) % 7}` }))),
      );
      for (const b of batch) {
        expect(b.status).toBe(200);
        created.push(b.json.id);
      }
    }
    let extra = 0;
    const createMore = async () => {
      const r = await c.post('/api/v1/subscriptions/create', body({ customer: 'cus_late' }));
      created.push(r.json.id);
      extra++;
    };

    // Forward: the first page fixes the set; rows created meanwhile are newer and never enter later pages.
    const forward: string[] = [];
    let page = await c.get('/api/v1/subscriptions?limit=23');
    const snapshot = new Set(created);
    for (;;) {
      expect(page.status).toBe(200);
      forward.push(...page.json.data.map((s: { id: string }) => s.id));
      await createMore();
      if (!page.json.has_more) break;
      page = await c.get(`/api/v1/subscriptions?limit=23&starting_after=${forward[forward.length - 1]}`);
    }
    expect(new Set(forward).size).toBe(forward.length);
    expect(new Set(forward)).toEqual(snapshot);
    expect(page.json.data.length).toBeGreaterThan(0);

    // Backward from the oldest: every row, including those created while paging, exactly once.
    const oldest = forward[forward.length - 1]!;
    const backward: string[] = [oldest];
    let cursor = oldest;
    for (;;) {
      const p = await c.get(`/api/v1/subscriptions?limit=17&ending_before=${cursor}`);
      expect(p.status).toBe(200);
      const ids = p.json.data.map((s: { id: string }) => s.id) as string[];
      backward.unshift(...ids);
      if (!p.json.has_more) {
        expect(ids.length).toBeGreaterThan(0);
        break;
      }
      expect(ids.length).toBe(17);
      cursor = ids[0]!;
      if (extra < 20) await createMore();
    }
    expect(new Set(backward).size).toBe(backward.length);
    expect(new Set(backward)).toEqual(new Set(created));
    // Newest first everywhere: the backward walk reassembles the same order as a fresh forward walk.
    const all: string[] = [];
    let f = await c.get('/api/v1/subscriptions?limit=100');
    for (;;) {
      all.push(...f.json.data.map((s: { id: string }) => s.id));
      if (!f.json.has_more) break;
      f = await c.get(`/api/v1/subscriptions?limit=100&starting_after=${all[all.length - 1]}`);
    }
    expect(all).toEqual(backward);
    // Filters combine with cursors.
    const byCustomer = await c.get('/api/v1/subscriptions?customer=cus_3&limit=100');
    expect(byCustomer.json.data.length).toBe(created.filter((_, i) => i < 250 && i % 7 === 3).length);
    expect(byCustomer.json.has_more).toBe(false);
  }, 120_000);
});
