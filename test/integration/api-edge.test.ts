import { request as httpRequest, Agent } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RefundRouteDeps } from '../../src/api/routes/refunds.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { markSessionPaid } from '../support/paid-session.js';
import type { SignedClient, TestResponse } from '../support/signed-client.js';

// The edge of the API (issue 13): what arrives before and around validation. Every refusal is in the spec's shape,
// with `param` always a string, and stores nothing.
const chains: RefundRouteDeps['chains'] = {
  normalizeAddress: (network, _mode, text) => (network === 'ethereum' && /^0x[0-9a-fA-F]{40}$/.test(text) ? text.toLowerCase() : null),
  tokenDecimals: (network, _mode, token) => (network === 'ethereum' && (token === 'USDT' || token === 'USDC') ? 6 : undefined),
  displayAddress: (_n, _m, canonical) => canonical,
};

let h: ApiHarness;
let shop: SignedClient;
let other: SignedClient;
let seq = 0;
const order = () => `edge-${Date.now()}-${seq++}`;
const CREATE = '/api/v1/checkout/sessions/create';

beforeAll(async () => {
  h = await startApiHarness({ chains });
  shop = (await h.merchant('Edge shop')).test;
  other = (await h.merchant('Other shop')).test;
});
afterAll(async () => h.close());

function expectRefusal(r: TestResponse, status: number, code: string, param: string) {
  expect(r.status, r.text).toBe(status);
  expect(r.json).toEqual({
    error: {
      type: 'invalid_request_error',
      code,
      message: expect.any(String),
      param,
      doc_url: expect.stringMatching(/^https:\/\/docs\.test\/errors#/),
    },
    request_id: expect.stringMatching(/^req_/),
    timestamp: expect.any(Number),
  });
}

const sessionCount = async () =>
  Number(
    (
      await h.t.db
        .selectFrom('payment_sessions')
        .select((eb) => eb.fn.countAll<bigint>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('deep nesting (item 1)', () => {
  it('refuses 2,600 nested arrays in description with 400 INVALID_JSON naming the limit', async () => {
    const before = await sessionCount();
    const r = await shop.post(
      CREATE,
      `{"amount":"1","currency":"USD","order_id":"${order()}","description":${'['.repeat(2600)}${']'.repeat(2600)}}`,
    );
    expectRefusal(r, 400, 'INVALID_JSON', '');
    expect(r.json.error.message).toContain('nested deeper than 32 levels');
    expect(await sessionCount()).toBe(before);
  });

  it('answers 20 parallel 48 KB bodies of 8,000 nested objects with 400 while /healthz stays responsive', async () => {
    const body = `{"metadata":${'{"a":'.repeat(8000)}"x"${'}'.repeat(8000)}}`;
    expect(body.length).toBeGreaterThan(47_000);
    const started = performance.now();
    const flood = Promise.all(Array.from({ length: 20 }, () => shop.post(CREATE, body)));
    const health = await fetch(`${h.baseUrl}/healthz`);
    const healthMs = performance.now() - started;
    const results = await flood;
    expect(health.status).toBe(200);
    for (const r of results) expectRefusal(r, 400, 'INVALID_JSON', '');
    // Before the cap the recursive walk held the event loop for seconds; a generous bound for a loaded machine.
    expect(healthMs).toBeLessThan(3000);
  });

  it('accepts 32 levels where a field takes any JSON (refused by the schema, not the parser)', async () => {
    const r = await shop.post(CREATE, `{"amount":"1","currency":"USD","order_id":"x","metadata":{"k":${'['.repeat(30)}${']'.repeat(30)}}}`);
    expectRefusal(r, 400, 'parameter_invalid', 'metadata[k]');
  });
});

describe('ill-formed strings and invalid UTF-8 (item 2)', () => {
  it.each([
    [
      'a lone surrogate in metadata (jsonb)',
      '{"amount":"1","currency":"USD","order_id":"ORDER","metadata":{"k":"\\ud800"}}',
      'metadata[k]',
    ],
    [
      'a lone surrogate in description (text)',
      '{"amount":"1","currency":"USD","order_id":"ORDER","description":"a\\udc00b"}',
      'description',
    ],
    ['a lone surrogate in order_id', '{"amount":"1","currency":"USD","order_id":"ORDER\\ud83d"}', 'order_id'],
  ])('refuses %s with 400 parameter_invalid and stores nothing', async (_n, text, param) => {
    const orderId = order();
    const r = await shop.post(CREATE, text.replace('ORDER', orderId));
    expectRefusal(r, 400, 'parameter_invalid', param);
    expect(await h.t.db.selectFrom('payment_sessions').select('id').where('order_id', 'like', `${orderId}%`).execute()).toHaveLength(0);
  });

  it('refuses invalid UTF-8 bytes, naming the field that holds them, and stores nothing', async () => {
    const orderId = order();
    const raw = Buffer.concat([
      Buffer.from(`{"amount":"1","currency":"USD","order_id":"${orderId}","description":"caf`),
      Buffer.from([0xe9]),
      Buffer.from('"}'),
    ]);
    const r = await shop.post(CREATE, raw);
    expectRefusal(r, 400, 'parameter_invalid', 'description');
    expect(r.json.error.message).toContain('UTF-8');
    expect(await h.t.db.selectFrom('payment_sessions').select('id').where('order_id', '=', orderId).execute()).toHaveLength(0);
  });

  it('refuses an ill-formed query string value on the page-style lists', async () => {
    expectRefusal(await shop.get('/api/v1/checkout/sessions?order_id=%00'), 400, 'parameter_invalid', 'order_id');
    expectRefusal(await shop.get('/api/v1/refunds?session_id=%00'), 400, 'parameter_invalid', 'session_id');
  });
});

/** Sends raw bytes on a fresh connection and collects everything until the server closes it. */
function rawExchange(payload: string): Promise<{ text: string; endedCleanly: boolean; error?: string }> {
  return new Promise((resolve) => {
    const socket = connect(Number(new URL(h.baseUrl).port), '127.0.0.1');
    const chunks: Buffer[] = [];
    let error: string | undefined;
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error = e.code ?? e.message;
    });
    socket.on('close', () =>
      resolve({ text: Buffer.concat(chunks).toString('utf8'), endedCleanly: error === undefined, ...(error ? { error } : {}) }),
    );
    socket.on('end', () => socket.end());
    socket.write(payload);
  });
}

function parseRaw(text: string) {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, json: JSON.parse(body) };
}

describe('oversized headers and malformed requests (item 3)', () => {
  const hugePath = `/api/v1/subscriptions/sub_x?${Array.from({ length: 1000 }, (_, i) => `expand[]=latest_invoice${i}`).join('&')}`;

  it('answers 431 in the spec shape with Connection: close, and closes without a reset', async () => {
    expect(hugePath.length).toBeGreaterThan(20_000);
    const r = await rawExchange(`GET ${hugePath} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(r.endedCleanly, r.error).toBe(true);
    const res = parseRaw(r.text);
    expect(res.status).toBe(431);
    expect(res.headers.connection).toBe('close');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(r.text.split('\r\n\r\n')[1]!));
    expect(res.json).toEqual({
      error: {
        type: 'invalid_request_error',
        code: 'request_header_too_large',
        message: expect.any(String),
        param: '',
        doc_url: 'https://docs.test/errors#request_header_too_large',
      },
      request_id: expect.stringMatching(/^req_/),
      timestamp: expect.any(Number),
    });
    expect(res.headers['request-id']).toBe(res.json.request_id);
  });

  it('answers a malformed request line with 400 in the spec shape, closed cleanly', async () => {
    const r = await rawExchange('NOT AN HTTP REQUEST\r\n\r\n');
    expect(r.endedCleanly, r.error).toBe(true);
    const res = parseRaw(r.text);
    expect(res.status).toBe(400);
    expect(res.headers.connection).toBe('close');
    expect(res.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: '' });
  });

  it('lets a keep-alive client read the 431, then serves its next request on a new connection', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = (path: string) =>
      new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
        const req = httpRequest(`${h.baseUrl}${path}`, { agent }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            body += c;
          });
          res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      expect((await get('/healthz')).status).toBe(200);
      const refused = await get(hugePath);
      expect(refused.status).toBe(431);
      expect(refused.connection).toBe('close');
      expect(JSON.parse(refused.body).error.code).toBe('request_header_too_large');
      const next = await get('/healthz');
      expect(next.status).toBe(200);
    } finally {
      agent.destroy();
    }
  });
});

describe('__proto__ keys (item 6)', () => {
  it.each([
    ['an object', '{"x":"1"}'],
    ['a string', '"s"'],
    ['a number', '1'],
    ['null', 'null'],
  ])('refuses metadata.__proto__ holding %s with 400 parameter_invalid', async (_n, value) => {
    const orderId = order();
    const r = await shop.post(CREATE, `{"amount":"1","currency":"USD","order_id":"${orderId}","metadata":{"a":"b","__proto__":${value}}}`);
    expectRefusal(r, 400, 'parameter_invalid', 'metadata[__proto__]');
    expect(await h.t.db.selectFrom('payment_sessions').select('id').where('order_id', '=', orderId).execute()).toHaveLength(0);
  });

  it('keeps constructor, prototype and toString as ordinary metadata keys', async () => {
    const r = await shop.post(CREATE, {
      amount: '1',
      currency: 'USD',
      order_id: order(),
      metadata: { constructor: 'c', prototype: 'p', toString: 't' },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.metadata).toMatchObject({ constructor: 'c', prototype: 'p', toString: 't' });
    const again = await shop.get(`/api/v1/checkout/sessions/${r.json.id}`);
    expect(again.json.metadata).toMatchObject({ constructor: 'c', prototype: 'p', toString: 't' });
  });

  it('refuses __proto__ in a refund body too', async () => {
    const r = await shop.post(
      '/api/v1/refunds/create',
      '{"session_id":"cs_x","refund_id":"r","amount":1,"currency":"USDT","metadata":{"__proto__":"x"}}',
    );
    expectRefusal(r, 400, 'parameter_invalid', 'metadata[__proto__]');
  });
});

describe('page-style lists continue from a cursor (item 10)', () => {
  it('pages sessions with next_cursor, keyset on (created_at, id): rows created meanwhile neither repeat nor skip', async () => {
    const m = (await h.merchant('Cursor shop')).test;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await m.post(CREATE, { amount: '1', currency: 'USD', order_id: `c-${i}` })).json.id);
    const newest = [...ids].reverse();
    const first = await m.get('/api/v1/checkout/sessions?page_size=2');
    expect(first.status).toBe(200);
    expect(first.json.data.map((s: { id: string }) => s.id)).toEqual(newest.slice(0, 2));
    expect(first.json.pagination).toMatchObject({
      page: 1,
      page_size: 2,
      total: 5,
      total_pages: 3,
      has_more: true,
      next_cursor: expect.any(String),
    });
    // A session created between two pages shifts page 2 by one; the cursor does not.
    const late = (await m.post(CREATE, { amount: '1', currency: 'USD', order_id: 'c-late' })).json.id;
    const second = await m.get(`/api/v1/checkout/sessions?page_size=2&cursor=${first.json.pagination.next_cursor}`);
    expect(second.status, second.text).toBe(200);
    expect(second.json.data.map((s: { id: string }) => s.id)).toEqual(newest.slice(2, 4));
    expect(second.json.pagination).toMatchObject({ page: 2, page_size: 2, total: 6, has_more: true });
    const third = await m.get(`/api/v1/checkout/sessions?page_size=2&cursor=${second.json.pagination.next_cursor}`);
    expect(third.json.data.map((s: { id: string }) => s.id)).toEqual(newest.slice(4));
    expect(third.json.pagination).toMatchObject({ has_more: false, next_cursor: null });
    const byOffset = await m.get('/api/v1/checkout/sessions?page_size=2&page=2');
    expect(byOffset.json.data.map((s: { id: string }) => s.id)).toEqual([newest[1], newest[2]]);
    expect(byOffset.json.data.map((s: { id: string }) => s.id)).not.toContain(late);
  });

  it('pages refunds with next_cursor', async () => {
    const m = await h.merchant('Refund cursor shop');
    const refundIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const s = (await m.test.post(CREATE, { amount: '5', currency: 'USD', order_id: `rc-${i}` })).json.id;
      await markSessionPaid(h.t.db, s, { receivedBase: 5_000_000n, from: `0x${'22'.repeat(20)}` });
      const r = await m.test.post('/api/v1/refunds/create', { session_id: s, refund_id: `rc-${i}`, amount: 100, currency: 'USDT' });
      expect(r.status, r.text).toBe(201);
      refundIds.push(`rc-${i}`);
    }
    const first = await m.test.get('/api/v1/refunds?page_size=2');
    expect(first.json.data.map((r: { refund_id: string }) => r.refund_id)).toEqual(['rc-2', 'rc-1']);
    const second = await m.test.get(`/api/v1/refunds?page_size=2&cursor=${first.json.pagination.next_cursor}`);
    expect(second.status, second.text).toBe(200);
    expect(second.json.data.map((r: { refund_id: string }) => r.refund_id)).toEqual(['rc-0']);
    expect(second.json.pagination).toMatchObject({ page: 2, total: 3, has_more: false, next_cursor: null });
  });

  it('refuses page with cursor, and a malformed, forged or foreign cursor, with 400 parameter_invalid', async () => {
    const mine = (await shop.post(CREATE, { amount: '1', currency: 'USD', order_id: order() })).json.id as string;
    const theirs = (await other.post(CREATE, { amount: '1', currency: 'USD', order_id: order() })).json.id as string;
    const cursorOf = (id: string) => Buffer.from(JSON.stringify({ after: id })).toString('base64url');
    expect((await shop.get(`/api/v1/checkout/sessions?cursor=${cursorOf(mine)}`)).status).toBe(200);
    expectRefusal(await shop.get(`/api/v1/checkout/sessions?page=2&cursor=${cursorOf(mine)}`), 400, 'parameter_invalid', 'cursor');
    for (const bad of [
      '!!',
      'bm90IGpzb24',
      cursorOf('cs_short'),
      cursorOf(`cs_${'A'.repeat(24)}`),
      cursorOf(theirs),
      Buffer.from('{"after":1}').toString('base64url'),
      'x'.repeat(201),
    ]) {
      expectRefusal(await shop.get(`/api/v1/checkout/sessions?cursor=${bad}`), 400, 'parameter_invalid', 'cursor');
      expectRefusal(await shop.get(`/api/v1/refunds?cursor=${bad}`), 400, 'parameter_invalid', 'cursor');
    }
  });
});

describe('cancel bodies take no field (item 11)', () => {
  it('refuses any field in a session cancel with 400 parameter_unknown, and cancels with {} or no body', async () => {
    const a = (await shop.post(CREATE, { amount: '1', currency: 'USD', order_id: order() })).json.id;
    expectRefusal(await shop.post(`/api/v1/checkout/sessions/${a}/cancel`, { reason: 'x' }), 400, 'parameter_unknown', 'reason');
    expect((await h.t.db.selectFrom('payment_sessions').select('status').where('id', '=', a).executeTakeFirstOrThrow()).status).toBe(
      'open',
    );
    expect((await shop.post(`/api/v1/checkout/sessions/${a}/cancel`, {})).status).toBe(200);
    const b = (await shop.post(CREATE, { amount: '1', currency: 'USD', order_id: order() })).json.id;
    const empty = await shop.post(`/api/v1/checkout/sessions/${b}/cancel`, '', { headers: { 'content-type': undefined } });
    expect(empty.status, empty.text).toBe(200);
  });

  it('refuses any field in a refund cancel with 400 parameter_unknown, and cancels with {}', async () => {
    const s = (await shop.post(CREATE, { amount: '5', currency: 'USD', order_id: order() })).json.id;
    await markSessionPaid(h.t.db, s, { receivedBase: 5_000_000n, from: `0x${'22'.repeat(20)}` });
    const refundId = `cancel-${order()}`;
    expect((await shop.post('/api/v1/refunds/create', { session_id: s, refund_id: refundId, amount: 100, currency: 'USDT' })).status).toBe(
      201,
    );
    expectRefusal(await shop.post(`/api/v1/refunds/${refundId}/cancel`, { force: true }), 400, 'parameter_unknown', 'force');
    expect((await h.t.db.selectFrom('refunds').select('status').where('refund_id', '=', refundId).executeTakeFirstOrThrow()).status).toBe(
      'pending',
    );
    const ok = await shop.post(`/api/v1/refunds/${refundId}/cancel`, {});
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.status).toBe('canceled');
  });

  it('still validates the subscription cancel fields', async () => {
    expectRefusal(
      await shop.post('/api/v1/subscriptions/sub_000000000000000000000000/cancel', { bogus: 1 }),
      400,
      'parameter_unknown',
      'bogus',
    );
  });
});

describe('error.param is always a string (item 15)', () => {
  it('is "" when no single parameter is at fault: bad JSON, unknown route, 413, unknown id', async () => {
    expectRefusal(await shop.post(CREATE, '{'), 400, 'INVALID_JSON', '');
    expectRefusal(await shop.get('/api/v1/nope'), 404, 'resource_not_found', '');
    expectRefusal(
      await shop.post(CREATE, { amount: '1', currency: 'USD', order_id: 'x', description: 'x'.repeat(70_000) }),
      413,
      'request_too_large',
      '',
    );
    expectRefusal(await shop.post(CREATE, '[]'), 400, 'INVALID_JSON', '');
    const unsigned = await fetch(`${h.baseUrl}${CREATE}`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    const body = (await unsigned.json()) as { error: { param: unknown } };
    expect(unsigned.status).toBe(401);
    expect(typeof body.error.param).toBe('string');
  });
});
