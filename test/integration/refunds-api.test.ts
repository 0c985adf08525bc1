import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { RefundRouteDeps } from '../../src/api/routes/refunds.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { markSessionPaid } from '../support/paid-session.js';
import type { SignedClient } from '../support/signed-client.js';

// The refund API without a chain: sessions are made paid as the ledger would, payouts are not running, so refunds
// stay pending and every rule of the create, get, cancel and list operations can be checked exactly.
const chains: RefundRouteDeps['chains'] = {
  normalizeAddress: (network, _mode, text) => (network === 'ethereum' && /^0x[0-9a-fA-F]{40}$/.test(text) ? text.toLowerCase() : null),
  tokenDecimals: (network, _mode, token) => (network === 'ethereum' && (token === 'USDT' || token === 'USDC') ? 6 : undefined),
  displayAddress: (_n, _m, canonical) => canonical,
};

let h: ApiHarness;
let shop: SignedClient;
let seq = 0;
const rid = () => `r-${Date.now()}-${seq++}`;

beforeAll(async () => {
  h = await startApiHarness({ chains });
  const m = await h.merchant();
  shop = m.test;
});
afterAll(async () => h.close());

async function paidSession(client = shop, amount = '10.00', receivedBase = 10_000_000n, token: 'USDT' | 'USDC' = 'USDT') {
  const s = (await client.post('/api/v1/checkout/sessions/create', { amount, currency: 'USD', order_id: `o-${Date.now()}-${seq++}` })).json;
  await markSessionPaid(h.t.db, s.id, { receivedBase, token, from: `0x${'22'.repeat(20)}` });
  return s.id as string;
}

const refund = (body: Record<string, unknown>, client = shop) => client.post('/api/v1/refunds/create', body);

describe('create refund', () => {
  it('creates a pending refund with every field, to the payer, and replays it for the same refund_id and body', async () => {
    const sessionId = await paidSession();
    const refundId = rid();
    const body = {
      session_id: sessionId,
      refund_id: refundId,
      amount: 400,
      currency: 'USDT',
      reason: 'requested_by_customer',
      description: 'broken',
      metadata: { ticket: 'T-1' },
    };
    const r = await refund(body);
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({
      object: 'refund',
      refund_id: refundId,
      session_id: sessionId,
      amount: 400,
      currency: 'USDT',
      status: 'pending',
      reason: 'requested_by_customer',
      description: 'broken',
      failure_reason: null,
      transaction_hash: null,
      receipt_number: null,
      processed_at: null,
      canceled_at: null,
      metadata: { ticket: 'T-1' },
      network: 'ethereum',
      destination_address: `0x${'22'.repeat(20)}`,
    });
    expect(r.json.id).toMatch(/^re_[0-9A-Za-z]{24}$/);
    expect(r.json.order_id).toMatch(/^o-/);
    expect(typeof r.json.created_at).toBe('number');
    const row = await h.t.db.selectFrom('refunds').select(['amount_base']).where('id', '=', r.json.id).executeTakeFirstOrThrow();
    expect(row.amount_base).toBe(4_000_000n); // 4.00 USDT at 6 decimals, exact

    const again = await refund(body);
    expect(again.status).toBe(201);
    expect(again.json).toEqual(r.json);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const other = await refund({ ...body, amount: 401 });
    expect(other.status).toBe(409);
    expect(other.json.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
  });

  it('refunds to destination_address when given, validated for the network', async () => {
    const sessionId = await paidSession();
    const ok = await refund({
      session_id: sessionId,
      refund_id: rid(),
      amount: 100,
      currency: 'USDT',
      destination_address: `0x${'AB'.repeat(20)}`,
    });
    expect(ok.json.destination_address).toBe(`0x${'ab'.repeat(20)}`);
    const bad = await refund({
      session_id: sessionId,
      refund_id: rid(),
      amount: 100,
      currency: 'USDT',
      destination_address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ code: 'parameter_invalid', param: 'destination_address' });
  });

  it('adds partial refunds up to the amount paid and refuses one more', async () => {
    const sessionId = await paidSession();
    for (const amount of [300, 300, 400])
      expect((await refund({ session_id: sessionId, refund_id: rid(), amount, currency: 'USDT' })).status).toBe(201);
    const over = await refund({ session_id: sessionId, refund_id: rid(), amount: 1, currency: 'USDT' });
    expect(over.status).toBe(400);
    expect(over.json.error).toMatchObject({ code: 'REFUND_AMOUNT_EXCEEDED', param: 'amount' });
  });

  it('counts an overpayment as paid, and canceled or failed refunds as given back', async () => {
    const sessionId = await paidSession(shop, '10.00', 12_345_678n); // 12.345678 paid: 12.34 refundable
    const a = await refund({ session_id: sessionId, refund_id: rid(), amount: 1234, currency: 'USDT' });
    expect(a.status).toBe(201);
    expect((await refund({ session_id: sessionId, refund_id: rid(), amount: 1, currency: 'USDT' })).json.error.code).toBe(
      'REFUND_AMOUNT_EXCEEDED',
    );
    expect((await shop.post(`/api/v1/refunds/${a.json.refund_id}/cancel`)).status).toBe(200);
    expect((await refund({ session_id: sessionId, refund_id: rid(), amount: 1234, currency: 'USDT' })).status).toBe(201);
  });

  it('never lets 20 concurrent refunds sum above the amount paid', async () => {
    const sessionId = await paidSession(); // 1000 paid
    const results = await Promise.all(
      Array.from({ length: 20 }, () => refund({ session_id: sessionId, refund_id: rid(), amount: 150, currency: 'USDT' })),
    );
    const accepted = results.filter((r) => r.status === 201);
    expect(accepted).toHaveLength(6); // 6 × 150 = 900 ≤ 1000 < 7 × 150
    expect(results.filter((r) => r.status === 400 && r.json.error.code === 'REFUND_AMOUNT_EXCEEDED')).toHaveLength(14);
    const { total } = await h.t.db
      .selectFrom('refunds')
      .select((eb) => eb.fn.sum<bigint>('amount_minor').as('total'))
      .where('session_id', '=', sessionId)
      .executeTakeFirstOrThrow();
    expect(BigInt(total)).toBe(900n);
  });

  it.each([
    ['no session_id', { refund_id: 'x', amount: 1, currency: 'USDT' }, 400, 'MISSING_CHARGE', 'session_id'],
    ['no refund_id', { session_id: 'cs_x', amount: 1, currency: 'USDT' }, 400, 'MISSING_REFUND_ID', 'refund_id'],
    ['a zero amount', { session_id: 'cs_x', refund_id: 'x', amount: 0, currency: 'USDT' }, 400, 'INVALID_AMOUNT', 'amount'],
    ['a negative amount', { session_id: 'cs_x', refund_id: 'x', amount: -5, currency: 'USDT' }, 400, 'INVALID_AMOUNT', 'amount'],
    ['a fractional amount', { session_id: 'cs_x', refund_id: 'x', amount: 1.5, currency: 'USDT' }, 400, 'INVALID_AMOUNT', 'amount'],
    ['a string amount', { session_id: 'cs_x', refund_id: 'x', amount: '100', currency: 'USDT' }, 400, 'INVALID_AMOUNT', 'amount'],
    ['a huge amount', { session_id: 'cs_x', refund_id: 'x', amount: 2 ** 60, currency: 'USDT' }, 400, 'INVALID_AMOUNT', 'amount'],
    ['no amount', { session_id: 'cs_x', refund_id: 'x', currency: 'USDT' }, 400, 'parameter_missing', 'amount'],
    ['a fiat currency', { session_id: 'cs_x', refund_id: 'x', amount: 1, currency: 'USD' }, 400, 'INVALID_CURRENCY', 'currency'],
    [
      'an unknown reason',
      { session_id: 'cs_x', refund_id: 'x', amount: 1, currency: 'USDT', reason: 'bored' },
      400,
      'parameter_invalid',
      'reason',
    ],
    ['an unknown field', { session_id: 'cs_x', refund_id: 'x', amount: 1, currency: 'USDT', amout: 1 }, 400, 'parameter_unknown', 'amout'],
    [
      'an unknown session',
      { session_id: 'cs_doesnotexist', refund_id: 'x', amount: 1, currency: 'USDT' },
      404,
      'SESSION_NOT_FOUND',
      'session_id',
    ],
  ])('refuses %s', async (_n, body, status, code, param) => {
    const r = await refund(body);
    expect(r.status).toBe(status);
    expect(r.json.error).toMatchObject({ code, param });
    expect(r.json.request_id).toMatch(/^req_/);
  });

  it('refuses malformed JSON with INVALID_JSON', async () => {
    const r = await shop.post('/api/v1/refunds/create', '{"session_id": ');
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('INVALID_JSON');
  });

  it('answers 403 session_access_denied for another merchant or mode, and INVALID_SESSION_STATUS for unpaid', async () => {
    const sessionId = await paidSession();
    const other = await h.merchant('Other');
    const r = await refund({ session_id: sessionId, refund_id: rid(), amount: 1, currency: 'USDT' }, other.test);
    expect(r.status).toBe(403);
    expect(r.json.error).toMatchObject({ type: 'permission_error', code: 'session_access_denied' });
    const live = await (await h.merchant('Moded')).live();
    expect((await refund({ session_id: sessionId, refund_id: rid(), amount: 1, currency: 'USDT' }, live)).status).toBe(403);
    const unpaid = (await shop.post('/api/v1/checkout/sessions/create', { amount: '1', currency: 'USD', order_id: `u-${seq++}` })).json;
    const u = await refund({ session_id: unpaid.id, refund_id: rid(), amount: 1, currency: 'USDT' });
    expect(u.status).toBe(400);
    expect(u.json.error.code).toBe('INVALID_SESSION_STATUS');
  });

  it('refuses another stablecoin than the one paid with INVALID_CURRENCY', async () => {
    const sessionId = await paidSession(shop, '10.00', 10_000_000n, 'USDC');
    const r = await refund({ session_id: sessionId, refund_id: rid(), amount: 1, currency: 'USDT' });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('INVALID_CURRENCY');
    expect((await refund({ session_id: sessionId, refund_id: rid(), amount: 1, currency: 'usdc' })).status).toBe(201);
  });

  it('refuses after the refund window with REFUND_TIME_EXPIRED', async () => {
    const sessionId = await paidSession();
    await h.t.db
      .updateTable('payment_sessions')
      .set({ paid_at: new Date(Date.now() - 181 * 86_400_000) })
      .where('id', '=', sessionId)
      .execute();
    const r = await refund({ session_id: sessionId, refund_id: rid(), amount: 1, currency: 'USDT' });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('REFUND_TIME_EXPIRED');
  });

  it('answers 429 DAILY_REFUND_LIMIT_EXCEEDED by count and by amount', async () => {
    const m = await h.merchant('Limited');
    await h.t.db
      .updateTable('merchants')
      .set({ daily_refund_count_limit: 2, daily_refund_amount_limit_minor: 500n })
      .where('id', '=', m.merchantId)
      .execute();
    const s1 = await paidSession(m.test);
    expect((await refund({ session_id: s1, refund_id: rid(), amount: 100, currency: 'USDT' }, m.test)).status).toBe(201);
    const byAmount = await refund({ session_id: s1, refund_id: rid(), amount: 401, currency: 'USDT' }, m.test);
    expect(byAmount.status).toBe(429);
    expect(byAmount.json.error).toMatchObject({ type: 'rate_limit_error', code: 'DAILY_REFUND_LIMIT_EXCEEDED' });
    expect((await refund({ session_id: s1, refund_id: rid(), amount: 400, currency: 'USDT' }, m.test)).status).toBe(201);
    const byCount = await refund({ session_id: s1, refund_id: rid(), amount: 1, currency: 'USDT' }, m.test);
    expect(byCount.status).toBe(429);
    // Yesterday's refunds do not count.
    await h.t.db
      .updateTable('refunds')
      .set({ created_at: sql`now() - interval '1 day'` })
      .where('merchant_id', '=', m.merchantId)
      .execute();
    expect((await refund({ session_id: s1, refund_id: rid(), amount: 1, currency: 'USDT' }, m.test)).status).toBe(201);
  });
});

describe('get, cancel and list refunds', () => {
  it('gets by refund_id or id; 404 REFUND_NOT_FOUND; 403 FORBIDDEN for another merchant', async () => {
    const sessionId = await paidSession();
    const created = (await refund({ session_id: sessionId, refund_id: rid(), amount: 50, currency: 'USDT' })).json;
    expect((await shop.get(`/api/v1/refunds/${created.refund_id}`)).json).toEqual(created);
    expect((await shop.get(`/v1/refunds/${created.id}`)).json).toEqual(created);
    const missing = await shop.get('/api/v1/refunds/nope');
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('REFUND_NOT_FOUND');
    const other = await h.merchant('Snoop');
    const f = await other.test.get(`/api/v1/refunds/${created.refund_id}`);
    expect(f.status).toBe(403);
    expect(f.json.error).toMatchObject({ type: 'permission_error', code: 'FORBIDDEN' });
    expect((await other.test.post(`/api/v1/refunds/${created.refund_id}/cancel`)).status).toBe(403);
  });

  it('cancels a pending refund; a second cancel, or a cancel after signing, is CANNOT_CANCEL_REFUND', async () => {
    const sessionId = await paidSession();
    const created = (await refund({ session_id: sessionId, refund_id: rid(), amount: 50, currency: 'USDT' })).json;
    const c = await shop.post(`/api/v1/refunds/${created.refund_id}/cancel`, {});
    expect(c.status).toBe(200);
    expect(c.json).toEqual({ refund_id: created.refund_id, status: 'canceled', canceled_at: expect.any(Number) });
    const again = await shop.post(`/api/v1/refunds/${created.refund_id}/cancel`);
    expect(again.status).toBe(400);
    expect(again.json.error.code).toBe('CANNOT_CANCEL_REFUND');

    const processing = (await refund({ session_id: sessionId, refund_id: rid(), amount: 50, currency: 'USDT' })).json;
    await h.t.db.updateTable('refunds').set({ status: 'processing' }).where('id', '=', processing.id).execute();
    expect((await shop.post(`/api/v1/refunds/${processing.refund_id}/cancel`)).status).toBe(200); // not yet signed
    const signed = (await refund({ session_id: sessionId, refund_id: rid(), amount: 50, currency: 'USDT' })).json;
    await h.t.db.updateTable('refunds').set({ status: 'processing', signed_at: new Date() }).where('id', '=', signed.id).execute();
    const late = await shop.post(`/api/v1/refunds/${signed.refund_id}/cancel`);
    expect(late.status).toBe(400);
    expect(late.json.error.code).toBe('CANNOT_CANCEL_REFUND');
  });

  it('replays a refund cancel with the same Idempotency-Key; without it a second cancel is CANNOT_CANCEL_REFUND', async () => {
    const sessionId = await paidSession();
    const created = (await refund({ session_id: sessionId, refund_id: rid(), amount: 50, currency: 'USDT' })).json;
    const headers = { 'idempotency-key': `cancel-${created.refund_id}` };
    const first = await shop.post(`/api/v1/refunds/${created.refund_id}/cancel`, {}, { headers });
    expect(first.status).toBe(200);
    const retry = await shop.post(`/api/v1/refunds/${created.refund_id}/cancel`, {}, { headers });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.json).toEqual(first.json);
    expect((await shop.post(`/api/v1/refunds/${created.refund_id}/cancel`)).json.error.code).toBe('CANNOT_CANCEL_REFUND');
    const other = (await refund({ session_id: sessionId, refund_id: rid(), amount: 50, currency: 'USDT' })).json;
    const reused = await shop.post(`/api/v1/refunds/${other.refund_id}/cancel`, {}, { headers });
    expect(reused.status).toBe(409);
    expect(reused.json.error.code).toBe('idempotency_key_reused');
    expect((await h.t.db.selectFrom('refunds').select('status').where('id', '=', other.id).executeTakeFirstOrThrow()).status).toBe(
      'pending',
    );
  });

  it('lists refunds page by page', async () => {
    const m = await h.merchant('Lister');
    const s = await paidSession(m.test);
    for (let i = 0; i < 3; i++) await refund({ session_id: s, refund_id: `l-${i}`, amount: 10, currency: 'USDT' }, m.test);
    const p = await m.test.get('/api/v1/refunds?page=1&page_size=2');
    expect(p.json.pagination).toEqual({ page: 1, page_size: 2, total: 3, total_pages: 2, has_more: true, next_cursor: expect.any(String) });
    expect(p.json.data.map((r: any) => r.refund_id)).toEqual(['l-2', 'l-1']);
    expect((await m.test.get('/api/v1/refunds?status=pending&page=2&page_size=2')).json.data.map((r: any) => r.refund_id)).toEqual(['l-0']);
    expect((await m.test.get('/api/v1/refunds?status=weird')).json.error.code).toBe('parameter_invalid');
  });
});

describe('money back: the same limits for unmatched deposits and unpaid sessions (issue 16)', () => {
  /** A final, unmatched deposit of `amountBase` USDT to this session's address. */
  async function unmatchedDeposit(sessionId: string, amountBase: bigint, confirmedAt = new Date()) {
    const id = `dep_${Date.now()}_${seq++}`;
    await h.t.db
      .insertInto('deposits')
      .values({
        id,
        network: 'ethereum',
        mode: 'test',
        tx_hash: `0x${id.replace(/\W/g, '').padEnd(64, '0').slice(0, 64)}`,
        log_index: 0,
        block_number: 1n,
        block_hash: `0x${'cd'.repeat(32)}`,
        block_time: confirmedAt,
        token: 'USDT',
        token_contract: `0x${'ab'.repeat(20)}`,
        from_address: `0x${'33'.repeat(20)}`,
        to_address: `0x${'44'.repeat(20)}`,
        amount_base: amountBase,
        session_id: sessionId,
        status: 'confirmed',
        disposition: 'unmatched',
        unmatched_reason: 'session_paid',
        confirmed_at: confirmedAt,
      })
      .execute();
    return id;
  }

  it('counts deposit refunds in the daily limit, applies the refund window, and caps each deposit at what it brought', async () => {
    const m = await h.merchant('Deposit limits');
    await h.t.db.updateTable('merchants').set({ daily_refund_count_limit: 2 }).where('id', '=', m.merchantId).execute();
    const s = await paidSession(m.test);
    const dep = await unmatchedDeposit(s, 1_234_567n);
    // Sub-cent dust is not refundable: 1.234567 USDT caps at 123.
    const over = await refund({ deposit_id: dep, refund_id: rid(), amount: 124, currency: 'USDT' }, m.test);
    expect(over.json.error.code).toBe('REFUND_AMOUNT_EXCEEDED');
    const first = await refund({ deposit_id: dep, refund_id: rid(), amount: 123, currency: 'USDT' }, m.test);
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({ deposit_id: dep, session_id: s, destination_address: `0x${'33'.repeat(20)}`, status: 'pending' });
    expect((await refund({ session_id: s, refund_id: rid(), amount: 100, currency: 'USDT' }, m.test)).status).toBe(201);
    const third = await refund(
      { deposit_id: await unmatchedDeposit(s, 1_000_000n), refund_id: rid(), amount: 1, currency: 'USDT' },
      m.test,
    );
    expect(third.status).toBe(429);
    expect(third.json.error.code).toBe('DAILY_REFUND_LIMIT_EXCEEDED');

    const old = await unmatchedDeposit(await paidSession(), 1_000_000n, new Date(Date.now() - 181 * 86_400_000));
    const late = await refund({ deposit_id: old, refund_id: rid(), amount: 1, currency: 'USDT' });
    expect(late.json.error.code).toBe('REFUND_TIME_EXPIRED');
    // deposit_id with payment_id, or with a session it was not made to: refused, nothing created.
    expect((await refund({ deposit_id: old, payment_id: 'pay_x', refund_id: rid(), amount: 1, currency: 'USDT' })).status).toBe(400);
    const wrong = await refund({ deposit_id: old, session_id: await paidSession(), refund_id: rid(), amount: 1, currency: 'USDT' });
    expect(wrong.json.error).toMatchObject({ code: 'parameter_invalid', param: 'deposit_id' });
    expect(await h.t.db.selectFrom('refunds').select('id').where('deposit_id', '=', old).execute()).toEqual([]);
  });

  it('refunds an expired session only up to what it received, and refuses one that received nothing', async () => {
    const s = (await shop.post('/api/v1/checkout/sessions/create', { amount: '10.00', currency: 'USD', order_id: `o-exp-${seq++}` })).json
      .id as string;
    await markSessionPaid(h.t.db, s, { receivedBase: 3_000_000n, token: 'USDT', from: `0x${'55'.repeat(20)}` });
    // Undo the payment the helper recorded: an expired session that received 3.00 of 10.00.
    await h.t.db.deleteFrom('session_settlements').where('session_id', '=', s).execute();
    await h.t.db
      .updateTable('payment_sessions')
      .set({ status: 'expired', paid_at: null, expired_at: new Date() })
      .where('id', '=', s)
      .execute();
    expect((await refund({ session_id: s, refund_id: rid(), amount: 301, currency: 'USDT' })).json.error.code).toBe(
      'REFUND_AMOUNT_EXCEEDED',
    );
    expect((await refund({ session_id: s, refund_id: rid(), amount: 300, currency: 'USDC' })).json.error.code).toBe('INVALID_CURRENCY');
    const ok = await refund({ session_id: s, refund_id: rid(), amount: 300, currency: 'USDT' });
    expect(ok.status).toBe(201);
    expect(ok.json.destination_address).toBe(`0x${'55'.repeat(20)}`);

    const empty = (await shop.post('/api/v1/checkout/sessions/create', { amount: '1.00', currency: 'USD', order_id: `o-exp-${seq++}` }))
      .json.id as string;
    await h.t.db.updateTable('payment_sessions').set({ status: 'expired', expired_at: new Date() }).where('id', '=', empty).execute();
    const none = await refund({ session_id: empty, refund_id: rid(), amount: 1, currency: 'USDT' });
    expect(none.status).toBe(400);
    expect(none.json.error.code).toBe('INVALID_SESSION_STATUS');
  });
});
