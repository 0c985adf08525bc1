import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKOUT_BASE, startApiHarness, type ApiHarness } from '../support/api-harness.js';
import type { SignedClient } from '../support/signed-client.js';

const BASE = '/api/v1/checkout/sessions';
let h: ApiHarness;
let shop: SignedClient;
let n = 0;
const order = () => `order-${Date.now()}-${n++}`;

beforeAll(async () => {
  h = await startApiHarness();
  const m = await h.merchant();
  shop = m.test;
});
afterAll(async () => h.close());

const outbox = (sessionId: string) =>
  h.t.db.selectFrom('outbox_events').selectAll().where('aggregate_id', '=', sessionId).orderBy('seq').execute();

describe('create payment session', () => {
  it('creates a USD session with every field, converted to USDT at the peg', async () => {
    const orderId = order();
    const body = {
      amount: '25.50',
      currency: 'USD',
      order_id: orderId,
      description: 'Two books',
      merchant_domain_id: 'shop.example',
      line_items: [
        { price_data: { currency: 'usd', unit_amount: '10.00', product_data: { name: 'Book', description: 'Paperback' } }, quantity: 2 },
        { price_data: { currency: 'USD', unit_amount: '3', product_data: { name: 'Bookmark' } } },
      ],
      tax_amount: '1.50',
      shipping_amount: '1.00',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/cancel',
      metadata: { customer: 'c-1' },
    };
    const before = Math.floor(Date.now() / 1000);
    const r = await shop.post(`${BASE}/create`, body);
    expect(r.status).toBe(200);
    const s = r.json;
    expect(s.id).toMatch(/^cs_[0-9A-Za-z]{24}$/);
    expect(s).toMatchObject({
      amount_total: '25.50',
      currency: 'usd',
      payment_status: 'unpaid',
      url: `${CHECKOUT_BASE}/${s.id}`,
      tax_amount: '1.50',
      shipping_amount: '1.00',
      exchange_rate: '1',
      target_currency: 'USDT',
      target_amount_total: '25.50',
      metadata: { customer: 'c-1', order_id: orderId },
      line_items: [
        { price_data: { currency: 'usd', unit_amount: '10.00', product_data: { name: 'Book', description: 'Paperback' } }, quantity: 2 },
        { price_data: { currency: 'usd', unit_amount: '3.00', product_data: { name: 'Bookmark' } }, quantity: 1 },
      ],
    });
    expect(s.created).toBeGreaterThanOrEqual(before);
    expect(s.expires_at - s.created).toBe(1800);
    expect(s.rate_locked_at).toBeGreaterThanOrEqual(before);
    expect(r.headers.get('request-id')).toMatch(/^req_/);
  });

  it('omits the conversion fields when the merchant currency is the settlement currency', async () => {
    const r = await shop.post(`${BASE}/create`, { amount: '10', currency: 'USDT', order_id: order() });
    expect(r.status).toBe(200);
    expect(r.json.currency).toBe('usdt');
    expect(r.json.amount_total).toBe('10.00');
    for (const f of ['exchange_rate', 'target_currency', 'target_amount_total', 'rate_locked_at']) expect(r.json).not.toHaveProperty(f);
  });

  it('converts USDT to a pinned USDC and accepts a pinned network', async () => {
    const r = await shop.post(`${BASE}/create`, {
      amount: '10',
      currency: 'usdt',
      order_id: order(),
      metadata: { network: 'bsc', target_currency: 'USDC' },
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ target_currency: 'USDC', target_amount_total: '10.00', exchange_rate: '1' });
    expect(r.json.metadata).toMatchObject({ network: 'bsc', target_currency: 'USDC' });
  });

  it('answers 503 rate_unavailable and stores nothing when no source quotes the currency', async () => {
    const orderId = order();
    const r = await shop.post(`${BASE}/create`, { amount: '1000', currency: 'JPY', order_id: orderId });
    expect(r.status).toBe(503);
    expect(r.json.error).toMatchObject({ type: 'api_error', code: 'rate_unavailable' });
    const rows = await h.t.db.selectFrom('payment_sessions').select('id').where('order_id', '=', orderId).execute();
    expect(rows).toHaveLength(0);
  });

  it('refuses a duplicate order_id with 400 order_id_conflict', async () => {
    const orderId = order();
    expect((await shop.post(`${BASE}/create`, { amount: '1', currency: 'USD', order_id: orderId })).status).toBe(200);
    const r = await shop.post(`${BASE}/create`, { amount: '1', currency: 'USD', order_id: orderId });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'invalid_request_error', code: 'order_id_conflict', param: 'order_id' });
  });

  it('replays the first response for the same Idempotency-Key and body, and 409s on another body', async () => {
    const orderId = order();
    const headers = { 'idempotency-key': `idem-${orderId}` };
    const first = await shop.post(`${BASE}/create`, { amount: '5', currency: 'USD', order_id: orderId }, { headers });
    // Same meaning, different bytes: key order and whitespace do not matter.
    const again = await shop.post(`${BASE}/create`, `{ "order_id": "${orderId}",  "currency": "USD", "amount": "5" }`, { headers });
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const other = await shop.post(`${BASE}/create`, { amount: '6', currency: 'USD', order_id: orderId }, { headers });
    expect(other.status).toBe(409);
    expect(other.json.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
  });

  it('gives exactly one session for 50 parallel creates with one order_id', async () => {
    const orderId = order();
    const results = await Promise.all(
      Array.from({ length: 50 }, () => shop.post(`${BASE}/create`, { amount: '7.00', currency: 'USD', order_id: orderId })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 400 && r.json.error.code === 'order_id_conflict')).toHaveLength(49);
    const rows = await h.t.db.selectFrom('payment_sessions').select('id').where('order_id', '=', orderId).execute();
    expect(rows).toHaveLength(1);
  });

  it('gives one session and 50 identical answers for 50 parallel creates with one Idempotency-Key', async () => {
    const orderId = order();
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        shop.post(`${BASE}/create`, { amount: '7.00', currency: 'USD', order_id: orderId }, { headers: { 'idempotency-key': orderId } }),
      ),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(new Set(results.map((r) => r.json.id)).size).toBe(1);
  });
});

describe('bad input changes nothing and is answered in the spec shape', () => {
  const cases: Array<[string, unknown, number, string, string | null]> = [
    ['missing amount', { currency: 'USD', order_id: 'x' }, 400, 'parameter_missing', 'amount'],
    ['missing currency', { amount: '1', order_id: 'x' }, 400, 'parameter_missing', 'currency'],
    ['missing order_id', { amount: '1', currency: 'USD' }, 400, 'parameter_missing', 'order_id'],
    ['numeric amount', { amount: 12.5, currency: 'USD', order_id: 'x' }, 400, 'INVALID_AMOUNT', 'amount'],
    ['negative amount', { amount: '-1', currency: 'USD', order_id: 'x' }, 400, 'INVALID_AMOUNT', 'amount'],
    ['zero amount', { amount: '0.00', currency: 'USD', order_id: 'x' }, 400, 'INVALID_AMOUNT', 'amount'],
    ['exponent amount', { amount: '1e3', currency: 'USD', order_id: 'x' }, 400, 'INVALID_AMOUNT', 'amount'],
    ['too many decimals', { amount: '1.001', currency: 'USD', order_id: 'x' }, 400, 'INVALID_AMOUNT', 'amount'],
    ['decimals on JPY', { amount: '1.5', currency: 'JPY', order_id: 'x' }, 400, 'INVALID_AMOUNT', 'amount'],
    ['unknown currency', { amount: '1', currency: 'XYZ', order_id: 'x' }, 400, 'INVALID_CURRENCY', 'currency'],
    ['unknown field', { amount: '1', currency: 'USD', order_id: 'x', amout: '2' }, 400, 'parameter_unknown', 'amout'],
    ['wrong type', { amount: '1', currency: 'USD', order_id: 42 }, 400, 'parameter_invalid', 'order_id'],
    [
      'bad line item amount',
      {
        amount: '1',
        currency: 'USD',
        order_id: 'x',
        line_items: [{ price_data: { currency: 'usd', unit_amount: 'ten', product_data: { name: 'a' } } }],
      },
      400,
      'INVALID_AMOUNT',
      'line_items[0][price_data][unit_amount]',
    ],
    [
      'line item without name',
      {
        amount: '1',
        currency: 'USD',
        order_id: 'x',
        line_items: [{ price_data: { currency: 'usd', unit_amount: '1', product_data: {} } }],
      },
      400,
      'parameter_missing',
      'line_items[0][price_data][product_data][name]',
    ],
    [
      'line item currency differs',
      {
        amount: '1',
        currency: 'USD',
        order_id: 'x',
        line_items: [{ price_data: { currency: 'eur', unit_amount: '1', product_data: { name: 'a' } } }],
      },
      400,
      'parameter_invalid',
      'line_items[0][price_data][currency]',
    ],
    [
      'zero quantity',
      {
        amount: '1',
        currency: 'USD',
        order_id: 'x',
        line_items: [{ price_data: { currency: 'usd', unit_amount: '1', product_data: { name: 'a' } }, quantity: 0 }],
      },
      400,
      'parameter_invalid',
      'line_items[0][quantity]',
    ],
    ['non-string metadata', { amount: '1', currency: 'USD', order_id: 'x', metadata: { a: 1 } }, 400, 'parameter_invalid', 'metadata[a]'],
    [
      'bad pinned network',
      { amount: '1', currency: 'USD', order_id: 'x', metadata: { network: 'dogechain' } },
      400,
      'parameter_invalid',
      'metadata[network]',
    ],
    ['relative success_url', { amount: '1', currency: 'USD', order_id: 'x', success_url: '/ok' }, 400, 'parameter_invalid', 'success_url'],
    ['bad tax amount', { amount: '1', currency: 'USD', order_id: 'x', tax_amount: '1,5' }, 400, 'INVALID_AMOUNT', 'tax_amount'],
  ];
  it.each(cases)('%s', async (_name, body, status, code, param) => {
    const r = await shop.post(`${BASE}/create`, body as Record<string, unknown>);
    expect(r.status).toBe(status);
    expect(r.json.error.code).toBe(code);
    expect(r.json.error.param).toBe(param);
    expect(r.json.error.type).toBe('invalid_request_error');
    expect(r.json.request_id).toMatch(/^req_[0-9A-Za-z]{24}$/);
    expect(typeof r.json.timestamp).toBe('number');
    expect(r.json.error.doc_url).toMatch(/^https:\/\/docs\.test\/errors#/);
    expect(typeof r.json.error.message).toBe('string');
  });

  it.each([
    ['not JSON', '{"amount": "1",'],
    ['an array', '[1,2]'],
    ['a string', '"hello"'],
    ['null', 'null'],
  ])('refuses a body that is %s with 400 INVALID_JSON', async (_n, raw) => {
    const r = await shop.post(`${BASE}/create`, raw);
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'INVALID_JSON', type: 'invalid_request_error' });
  });

  it('refuses a body over 64 KiB with 413', async () => {
    const r = await shop.post(`${BASE}/create`, { amount: '1', currency: 'USD', order_id: 'x', description: 'x'.repeat(70_000) });
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe('request_too_large');
    expect(r.json.request_id).toMatch(/^req_/);
  });

  it('refuses a body with another content type', async () => {
    const r = await shop.post(`${BASE}/create`, 'amount=1', { headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('INVALID_JSON');
  });

  it('answers unknown routes with 404 in the error shape', async () => {
    for (const path of ['/api/v1/nope', '/nope', '/api/v2/checkout/sessions/create']) {
      const r = await shop.get(path);
      expect(r.status).toBe(404);
      expect(r.json.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_not_found' });
      expect(r.json.request_id).toMatch(/^req_/);
    }
  });
});

describe('get payment session', () => {
  it('returns the session under /api/v1 and the /v1 alias', async () => {
    const c = (await shop.post(`${BASE}/create`, { amount: '3.10', currency: 'USD', order_id: order() })).json;
    const a = await shop.get(`${BASE}/${c.id}`);
    const b = await shop.get(`/v1/checkout/sessions/${c.id}`);
    expect(a.status).toBe(200);
    expect(a.json).toEqual(c);
    expect(b.json).toEqual(c);
  });

  it('answers 404 for an unknown id and for another merchant', async () => {
    const c = (await shop.post(`${BASE}/create`, { amount: '1', currency: 'USD', order_id: order() })).json;
    expect((await shop.get(`${BASE}/cs_doesnotexist`)).status).toBe(404);
    const other = await h.merchant('Other shop');
    const r = await other.test.get(`${BASE}/${c.id}`);
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('resource_not_found');
  });

  it('hides a test session from the same merchant live key', async () => {
    const m = await h.merchant('Mode shop');
    const c = (await m.test.post(`${BASE}/create`, { amount: '1', currency: 'USD', order_id: order() })).json;
    const live = await m.live();
    const r = await live.get(`${BASE}/${c.id}`);
    expect(r.status).toBe(404);
    // The same order_id is free in the other mode: modes never share objects.
    const again = await live.post(`${BASE}/create`, { amount: '1', currency: 'USD', order_id: c.metadata.order_id });
    expect(again.status).toBe(200);
  });
});

describe('cancel payment session', () => {
  it('cancels an open session, shows unpaid without line items, and writes payment.cancelled', async () => {
    const c = (
      await shop.post(`${BASE}/create`, {
        amount: '9.99',
        currency: 'USD',
        order_id: order(),
        line_items: [{ price_data: { currency: 'usd', unit_amount: '9.99', product_data: { name: 'Mug' } } }],
      })
    ).json;
    const r = await shop.post(`${BASE}/${c.id}/cancel`, {});
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: c.id, payment_status: 'unpaid', status: 'canceled', amount_total: '9.99' });
    expect(r.json).not.toHaveProperty('line_items');
    const events = await outbox(c.id);
    expect(events).toHaveLength(1);
    const ev = events[0]!;
    expect(ev.type).toBe('payment.cancelled');
    expect(ev.payload).toEqual({
      id: ev.id,
      type: 'payment.cancelled',
      created_at: expect.any(Number),
      data: {
        object: {
          amount: '9.99',
          status: 'canceled',
          currency: 'USDT',
          exchange_rate: '1',
          order_id: c.metadata.order_id,
          session_id: c.id,
          source: 'api',
        },
      },
    });
    expect(ev.id).toMatch(/^evt_\d{19}$/);
  });

  it('answers 400 session_expired when canceled twice or after expiry, and writes no second event', async () => {
    const c = (await shop.post(`${BASE}/create`, { amount: '1', currency: 'USD', order_id: order() })).json;
    expect((await shop.post(`${BASE}/${c.id}/cancel`)).status).toBe(200);
    const again = await shop.post(`${BASE}/${c.id}/cancel`);
    expect(again.status).toBe(400);
    expect(again.json.error.code).toBe('session_expired');
    expect(await outbox(c.id)).toHaveLength(1);

    const d = (await shop.post(`${BASE}/${'create'}`, { amount: '1', currency: 'USD', order_id: order() })).json;
    await h.t.db
      .updateTable('payment_sessions')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', d.id)
      .execute();
    const late = await shop.post(`${BASE}/${d.id}/cancel`);
    expect(late.status).toBe(400);
    expect(late.json.error.code).toBe('session_expired');
  });

  it('replays a cancel with the same Idempotency-Key (a retry after a lost answer), one event; 409 for the key on another session', async () => {
    const c = (await shop.post(`${BASE}/create`, { amount: '1', currency: 'USD', order_id: order() })).json;
    const headers = { 'idempotency-key': `cancel-${c.id}` };
    const first = await shop.post(`${BASE}/${c.id}/cancel`, {}, { headers });
    expect(first.status).toBe(200);
    expect(first.json.status).toBe('canceled');
    const retry = await shop.post(`${BASE}/${c.id}/cancel`, {}, { headers });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.json).toEqual(first.json);
    expect(await outbox(c.id)).toHaveLength(1);
    // Without the key a second cancel is still refused (decisions.md); with it on another session, a reuse.
    expect((await shop.post(`${BASE}/${c.id}/cancel`)).json.error.code).toBe('session_expired');
    const d = (await shop.post(`${BASE}/create`, { amount: '1', currency: 'USD', order_id: order() })).json;
    const reused = await shop.post(`${BASE}/${d.id}/cancel`, {}, { headers });
    expect(reused.status).toBe(409);
    expect(reused.json.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
    expect((await shop.get(`${BASE}/${d.id}`)).json.status).toBe('open');
    // Ten retries at once with one key (a client retrying on a timeout): one cancel, one event, ten identical answers.
    const e = (await shop.post(`${BASE}/create`, { amount: '1', currency: 'USD', order_id: order() })).json;
    const twins = await Promise.all(
      Array.from({ length: 10 }, () => shop.post(`${BASE}/${e.id}/cancel`, {}, { headers: { 'idempotency-key': `cancel-${e.id}` } })),
    );
    expect(twins.map((t) => t.status)).toEqual(Array(10).fill(200));
    expect(new Set(twins.map((t) => JSON.stringify(t.json))).size).toBe(1);
    expect(await outbox(e.id)).toHaveLength(1);
  });

  it('answers 400 INVALID_SESSION_STATUS for a paid session, 404 for unknown or foreign, 400 on a bad body', async () => {
    const c = (await shop.post(`${BASE}/create`, { amount: '1', currency: 'USD', order_id: order() })).json;
    await h.t.db.updateTable('payment_sessions').set({ status: 'paid' }).where('id', '=', c.id).execute();
    const r = await shop.post(`${BASE}/${c.id}/cancel`);
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('INVALID_SESSION_STATUS');
    expect((await shop.post(`${BASE}/cs_nope/cancel`)).status).toBe(404);
    const other = await h.merchant('Third');
    const open = (await shop.post(`${BASE}/create`, { amount: '1', currency: 'USD', order_id: order() })).json;
    expect((await other.test.post(`${BASE}/${open.id}/cancel`)).status).toBe(404);
    const bad = await shop.post(`${BASE}/${open.id}/cancel`, '{not json');
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('INVALID_JSON');
    expect((await shop.get(`${BASE}/${open.id}`)).json.status).toBe('open');
  });
});

describe('operator list', () => {
  it('pages sessions newest first with page and page_size', async () => {
    const m = await h.merchant('Lister');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await m.test.post(`${BASE}/create`, { amount: '1', currency: 'USD', order_id: `l-${i}` })).json.id);
    const p1 = await m.test.get(`${BASE}?page=1&page_size=2`);
    expect(p1.status).toBe(200);
    expect(p1.json.pagination).toEqual({
      page: 1,
      page_size: 2,
      total: 5,
      total_pages: 3,
      has_more: true,
      next_cursor: expect.any(String),
    });
    const p3 = await m.test.get(`/v1/checkout/sessions?page=3&page_size=2`);
    expect(p3.json.pagination.has_more).toBe(false);
    const all = [...p1.json.data, ...(await m.test.get(`${BASE}?page=2&page_size=2`)).json.data, ...p3.json.data].map((s: any) => s.id);
    expect(all).toEqual([...ids].reverse()); // newest first, in order across pages
    expect((await m.test.get(`${BASE}?page_size=101`)).json.error.code).toBe('parameter_invalid');
    expect((await m.test.get(`${BASE}?page=0`)).json.error.code).toBe('parameter_invalid');
    expect((await m.test.get(`${BASE}?colour=red`)).json.error.code).toBe('parameter_unknown');
    expect((await m.test.get(`${BASE}?order_id=l-3`)).json.data.map((s: any) => s.id)).toEqual([ids[3]]);
  });
});
