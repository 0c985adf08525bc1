import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleHarness, startConsoleHarness } from '../support/console-harness.js';
import { markSessionPaid } from '../support/paid-session.js';
import { searchResultSchema } from '../../src/console/contract/stranded.js';
import { fakeChains, makeSession } from './console-pay-fixture.js';

// The console's search box: exact lookups by session id, order id, deposit address, transaction hash, refund id;
// a merchant user finds only its own merchant's objects.

let h: ConsoleHarness;
let shop: string;
let other: string;

beforeAll(async () => {
  h = await startConsoleHarness({ chains: fakeChains() });
  shop = (await h.merchant('Search shop')).merchantId;
  other = (await h.merchant('Other search shop')).merchantId;
});
afterAll(async () => {
  await h?.close();
});

describe('GET /api/search', () => {
  it('finds a session by id, order id, deposit address and transaction hash, and a refund by its ids', async () => {
    const id = await makeSession(h.t.db, shop, { orderId: 'search-order-1' });
    await h.t.db
      .updateTable('payment_sessions')
      .set({ deposit_address: `0x${'66'.repeat(20)}` })
      .where('id', '=', id)
      .execute();
    await markSessionPaid(h.t.db, id, { receivedBase: 5_000_000n, from: `0x${'77'.repeat(20)}` });
    const tx = await h.t.db.selectFrom('deposits').select(['id', 'tx_hash']).where('session_id', '=', id).executeTakeFirstOrThrow();
    const refund = await h.call(h.operator, 'POST', `/api/payments/${id}/refund`, { amount: '1.00', refund_id: 'search-refund-1' });
    expect(refund.status).toBe(201);

    for (const q of [id, 'search-order-1', `0x${'66'.repeat(20)}`]) {
      const r = await h.call(h.operator, 'GET', `/api/search?q=${q}`);
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      searchResultSchema.parse(r.json);
      expect(r.json.hits).toEqual([expect.objectContaining({ kind: 'session', id, session_id: id })]);
    }
    const byHash = await h.call(h.operator, 'GET', `/api/search?q=${tx.tx_hash}`);
    expect(byHash.json.hits).toEqual([expect.objectContaining({ kind: 'deposit', id: tx.id, session_id: id })]);
    const byRefund = await h.call(h.merchantUser(shop), 'GET', '/api/search?q=search-refund-1');
    expect(byRefund.json.hits).toEqual([expect.objectContaining({ kind: 'refund', id: refund.json.id, session_id: id })]);
    expect((await h.call(h.operator, 'GET', '/api/search?q=nothing-like-this')).json.hits).toEqual([]);
  });

  it("hides another merchant's objects from a merchant user, refuses its merchant_id (403) and bad input (400)", async () => {
    const id = await makeSession(h.t.db, shop, { orderId: 'search-order-2' });
    expect((await h.call(h.merchantUser(other), 'GET', `/api/search?q=${id}`)).json.hits).toEqual([]);
    expect((await h.call(h.merchantUser(shop), 'GET', `/api/search?q=${id}`)).json.hits).toHaveLength(1);
    expect((await h.call(h.merchantUser(other), 'GET', `/api/search?q=${id}&merchant_id=${shop}`)).status).toBe(403);
    expect((await h.call(h.operator, 'GET', '/api/search')).status).toBe(400);
    expect((await h.call(h.operator, 'GET', '/api/search?q=%20')).status).toBe(400);
    expect((await h.call(h.operator, 'GET', `/api/search?q=${'x'.repeat(201)}`)).status).toBe(400);
  });
});
