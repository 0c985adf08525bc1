import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleHarness, startConsoleHarness } from '../support/console-harness.js';
import { markSessionPaid } from '../support/paid-session.js';
import { paymentDetailSchema, paymentListSchema } from '../../src/console/contract/payments.js';
import { consoleRefundSchema } from '../../src/console/contract/refunds.js';
import { auditRows, fakeChains, makeSession } from './console-pay-fixture.js';

// The console's payments: list (filters, sort, keyset cursor, merchant scope), detail, refund with the API's rules,
// cancel; 400 on bad input with nothing changed, 403 on another merchant's session, an audit row per mutation.

let h: ConsoleHarness;
let shop: string;
let other: string;
const PAYER = `0x${'22'.repeat(20)}`;

beforeAll(async () => {
  h = await startConsoleHarness({ chains: fakeChains() });
  shop = (await h.merchant('Pay shop')).merchantId;
  other = (await h.merchant('Other shop')).merchantId;
});
afterAll(async () => {
  await h?.close();
});

describe('GET /api/payments', () => {
  it('lists newest first with a keyset cursor, filters, sorts by amount and finds by order id and transaction hash', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await makeSession(h.t.db, shop, { orderId: `list-${i}`, amountMinor: BigInt(100 * (i + 1)) }));
    await makeSession(h.t.db, other, { orderId: 'list-other' });
    await markSessionPaid(h.t.db, ids[1]!, { receivedBase: 2_000_000n, from: PAYER });

    const first = await h.call(h.operator, 'GET', `/api/payments?merchant_id=${shop}&limit=2`);
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    paymentListSchema.parse(first.json);
    expect(first.json.data.map((r: { id: string }) => r.id)).toEqual([ids[4], ids[3]]);
    const second = await h.call(h.operator, 'GET', `/api/payments?merchant_id=${shop}&limit=2&cursor=${first.json.next_cursor}`);
    expect(second.json.data.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1]]);
    const third = await h.call(h.operator, 'GET', `/api/payments?merchant_id=${shop}&limit=2&cursor=${second.json.next_cursor}`);
    expect(third.json.data.map((r: { id: string }) => r.id)).toEqual([ids[0]]);
    expect(third.json.next_cursor).toBeNull();

    const paid = await h.call(h.operator, 'GET', `/api/payments?merchant_id=${shop}&status=paid`);
    expect(paid.json.data).toHaveLength(1);
    expect(paid.json.data[0]).toMatchObject({
      id: ids[1],
      amount: '2.00',
      currency: 'USD',
      network: 'ethereum',
      token: 'USDT',
      received: '2.00',
    });

    const byAmount = await h.call(
      h.operator,
      'GET',
      `/api/payments?merchant_id=${shop}&sort=amount&order=asc&amount_min=2&amount_max=4.00`,
    );
    expect(byAmount.json.data.map((r: { amount: string }) => r.amount)).toEqual(['2.00', '3.00', '4.00']);

    expect((await h.call(h.operator, 'GET', '/api/payments?q=list-3')).json.data.map((r: { id: string }) => r.id)).toEqual([ids[3]]);
    const dep = await h.t.db.selectFrom('deposits').select('tx_hash').where('session_id', '=', ids[1]!).executeTakeFirstOrThrow();
    expect((await h.call(h.operator, 'GET', `/api/payments?q=${dep.tx_hash}`)).json.data.map((r: { id: string }) => r.id)).toEqual([
      ids[1],
    ]);
  });

  it('scopes a merchant user to its merchant and refuses another merchant_id (403)', async () => {
    const user = h.merchantUser(other);
    const mine = await h.call(user, 'GET', '/api/payments');
    expect(mine.status).toBe(200);
    expect(mine.json.data.length).toBeGreaterThan(0);
    expect(mine.json.data.every((r: { merchant_id: string }) => r.merchant_id === other)).toBe(true);
    const theirs = await h.call(user, 'GET', `/api/payments?merchant_id=${shop}`);
    expect(theirs.status).toBe(403);
    expect(theirs.json.error.code).toBe('not_permitted');
  });

  it('refuses bad input with 400 (unknown parameter, bad limit, bad cursor, bad amount)', async () => {
    for (const q of ['bogus=1', 'limit=0', 'limit=101', 'cursor=!!', 'amount_min=abc', 'sort=order_id', 'created_from=yesterday']) {
      const r = await h.call(h.operator, 'GET', `/api/payments?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.json.error.type).toBe('invalid_request_error');
    }
    expect((await h.call(null, 'GET', '/api/payments')).status).toBe(401);
  });
});

describe('GET /api/payments/:id', () => {
  it('answers the session, timeline, deposits with explorer links, refunds; 404 unknown; 403 to another merchant', async () => {
    const id = await makeSession(h.t.db, shop, { orderId: 'detail-1', amountMinor: 500n });
    await markSessionPaid(h.t.db, id, { receivedBase: 5_000_000n, from: PAYER });
    const r = await h.call(h.operator, 'GET', `/api/payments/${id}`);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    paymentDetailSchema.parse(r.json);
    expect(r.json.session).toMatchObject({ id, status: 'paid', amount_total: '5.00' });
    expect(r.json.timeline.map((e: { kind: string }) => e.kind)).toEqual(
      expect.arrayContaining(['created', 'deposit_seen', 'deposit_confirmed', 'paid']),
    );
    expect(r.json.deposits).toHaveLength(1);
    expect(r.json.deposits[0]).toMatchObject({ amount: '5.00', status: 'confirmed', from_address: PAYER });
    expect(r.json.deposits[0].explorer_url).toBe(`https://explorer.test/tx/${r.json.deposits[0].tx_hash}`);

    expect((await h.call(h.operator, 'GET', '/api/payments/cs_nope')).status).toBe(404);
    const denied = await h.call(h.merchantUser(other), 'GET', `/api/payments/${id}`);
    expect(denied.status).toBe(403);
    expect((await h.call(h.merchantUser(shop), 'GET', `/api/payments/${id}`)).status).toBe(200);
  });
});

describe('POST /api/payments/:id/refund', () => {
  it('refunds part of a paid session with the API rules, queues the payout and audits refund.create', async () => {
    const id = await makeSession(h.t.db, shop, { amountMinor: 500n });
    await markSessionPaid(h.t.db, id, { receivedBase: 5_000_000n, from: PAYER });
    const user = h.merchantUser(shop);
    const r = await h.call(user, 'POST', `/api/payments/${id}/refund`, { amount: '1.50', reason: 'requested_by_customer' });
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    consoleRefundSchema.parse(r.json);
    expect(r.json).toMatchObject({ session_id: id, amount: '1.50', token: 'USDT', status: 'pending', destination_address: PAYER });
    expect(h.enqueued).toContain(r.json.id);
    const audit = (await auditRows(h.t.db, 'refund.create')).filter((a) => a.object_id === r.json.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_id: user.userId, merchant_id: shop, object_type: 'refund' });

    // The API's rules: more than what is left is REFUND_AMOUNT_EXCEEDED; the rest by default.
    const over = await h.call(user, 'POST', `/api/payments/${id}/refund`, { amount: '3.51' });
    expect(over.status).toBe(400);
    expect(over.json.error.code).toBe('REFUND_AMOUNT_EXCEEDED');
    const rest = await h.call(user, 'POST', `/api/payments/${id}/refund`, {});
    expect(rest.status).toBe(201);
    expect(rest.json.amount).toBe('3.50');
  });

  it('refuses an open session, bad input (nothing created) and another merchant (403), and needs the CSRF token', async () => {
    const open = await makeSession(h.t.db, shop);
    const before = await h.t.db
      .selectFrom('refunds')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    const r = await h.call(h.operator, 'POST', `/api/payments/${open}/refund`, { amount: '1.00' });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('INVALID_SESSION_STATUS');
    const paid = await makeSession(h.t.db, shop);
    await markSessionPaid(h.t.db, paid, { receivedBase: 5_000_000n, from: PAYER });
    for (const body of [{ amount: '-1' }, { amount: '1.234' }, { amount: 'ten' }, { reason: 'because' }, { extra: true }]) {
      const bad = await h.call(h.operator, 'POST', `/api/payments/${paid}/refund`, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
    }
    const denied = await h.call(h.merchantUser(other), 'POST', `/api/payments/${paid}/refund`, { amount: '1.00' });
    expect(denied.status).toBe(403);
    const csrf = await h.call(h.operator, 'POST', `/api/payments/${paid}/refund`, { amount: '1.00' }, { csrf: 'wrong' });
    expect(csrf.status).toBe(403);
    expect(csrf.json.error.code).toBe('csrf_token_invalid');
    const after = await h.t.db
      .selectFrom('refunds')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });
});

describe('POST /api/payments/:id/cancel', () => {
  it('cancels an open session and audits session.cancel; a paid one is INVALID_SESSION_STATUS; another merchant 403', async () => {
    const id = await makeSession(h.t.db, shop);
    const denied = await h.call(h.merchantUser(other), 'POST', `/api/payments/${id}/cancel`);
    expect(denied.status).toBe(403);
    const r = await h.call(h.operator, 'POST', `/api/payments/${id}/cancel`);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.session).toMatchObject({ id, status: 'canceled' });
    const audit = (await auditRows(h.t.db, 'session.cancel')).filter((a) => a.object_id === id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      actor_id: h.operator.userId,
      merchant_id: shop,
      before: { status: 'open' },
      after: { status: 'canceled' },
    });
    const again = await h.call(h.operator, 'POST', `/api/payments/${id}/cancel`);
    expect(again.status).toBe(400);
    expect(again.json.error.code).toBe('session_expired');
    const paid = await makeSession(h.t.db, shop);
    await markSessionPaid(h.t.db, paid, { receivedBase: 5_000_000n, from: PAYER });
    const p = await h.call(h.operator, 'POST', `/api/payments/${paid}/cancel`);
    expect(p.status).toBe(400);
    expect(p.json.error.code).toBe('INVALID_SESSION_STATUS');
    expect((await h.t.db.selectFrom('payment_sessions').select('status').where('id', '=', paid).executeTakeFirstOrThrow()).status).toBe(
      'paid',
    );
  });
});
