import { journalBurntFee } from '../../src/ledger/journal/entries.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleHarness, startConsoleHarness } from '../support/console-harness.js';
import { markSessionPaid } from '../support/paid-session.js';
import { refundDetailSchema, refundListSchema } from '../../src/console/contract/refunds.js';
import { failRefund } from '../../src/ledger/refunds/refund-payouts.js';
import { auditRows, fakeChains, makeSession } from './console-pay-fixture.js';

// The console's refunds: list (scope, filters, keyset), detail with attempts, retry of a failed refund (the CLI's
// `payouts retry`), settle-from-chain (operators only).

let h: ConsoleHarness;
let shop: string;
let other: string;
const PAYER = `0x${'33'.repeat(20)}`;

async function refundOf(merchantId: string, amount = '1.00'): Promise<string> {
  const s = await makeSession(h.t.db, merchantId);
  await markSessionPaid(h.t.db, s, { receivedBase: 5_000_000n, from: PAYER });
  const r = await h.call(h.operator, 'POST', `/api/payments/${s}/refund`, { amount });
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json.id;
}

beforeAll(async () => {
  h = await startConsoleHarness({ chains: fakeChains() });
  shop = (await h.merchant('Refund shop')).merchantId;
  other = (await h.merchant('Other refund shop')).merchantId;
});
afterAll(async () => {
  await h?.close();
});

describe('GET /api/refunds', () => {
  it('lists newest first with a cursor, filters by status, scopes merchant users', async () => {
    const a = await refundOf(shop);
    const b = await refundOf(shop);
    const c = await refundOf(shop);
    const theirs = await refundOf(other);
    await failRefund(h.t.db, b, 'insufficient_gas');

    const first = await h.call(h.operator, 'GET', `/api/refunds?merchant_id=${shop}&limit=2`);
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    refundListSchema.parse(first.json);
    expect(first.json.data.map((r: { id: string }) => r.id)).toEqual([c, b]);
    const second = await h.call(h.operator, 'GET', `/api/refunds?merchant_id=${shop}&limit=2&cursor=${first.json.next_cursor}`);
    expect(second.json.data.map((r: { id: string }) => r.id)).toEqual([a]);
    expect(second.json.next_cursor).toBeNull();
    const failed = await h.call(h.operator, 'GET', `/api/refunds?merchant_id=${shop}&status=failed`);
    expect(failed.json.data.map((r: { id: string }) => r.id)).toEqual([b]);

    const mine = await h.call(h.merchantUser(other), 'GET', '/api/refunds');
    expect(mine.json.data.map((r: { id: string }) => r.id)).toEqual([theirs]);
    expect((await h.call(h.merchantUser(other), 'GET', `/api/refunds?merchant_id=${shop}`)).status).toBe(403);
    for (const q of ['status=lost', 'limit=500', 'sort=amount', 'cursor=%25%25', 'nope=1']) {
      expect((await h.call(h.operator, 'GET', `/api/refunds?${q}`)).status, q).toBe(400);
    }
  });
});

describe('GET /api/refunds/:id', () => {
  it('answers the refund and its attempts; 404 unknown; 403 to another merchant', async () => {
    const id = await refundOf(shop);
    await h.t.db
      .insertInto('payout_attempts')
      .values({
        refund_id: id,
        network: 'ethereum',
        mode: 'test',
        sender: PAYER,
        nonce: 7n,
        tx_hash: `0x${'ee'.repeat(32)}`,
        signed: '{}',
        state: 'broadcast',
      })
      .execute();
    // An earlier attempt that reverted: the fee it burnt is in the journal (and the same hash on BSC is not its fee).
    const reverted = `0x${'dd'.repeat(32)}`;
    await h.t.db
      .insertInto('payout_attempts')
      .values({
        refund_id: id,
        network: 'ethereum',
        mode: 'test',
        sender: PAYER,
        nonce: 6n,
        tx_hash: reverted,
        signed: '{}',
        state: 'failed',
      })
      .execute();
    const burnt = { mode: 'test' as const, txHash: reverted, sender: PAYER, block: { height: 10n, hash: `0x${'01'.repeat(32)}` } };
    const owner = { kind: 'refund_payout' as const, merchantId: shop, object: { type: 'refund' as const, id } };
    await journalBurntFee(h.t.db, { ...burnt, network: 'ethereum', fee: 21_000_000_000_000n }, owner);
    await journalBurntFee(h.t.db, { ...burnt, network: 'bsc', fee: 5n }, owner);
    const r = await h.call(h.merchantUser(shop), 'GET', `/api/refunds/${id}`);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    refundDetailSchema.parse(r.json);
    expect(r.json.refund).toMatchObject({ id, amount: '1.00', status: 'pending' });
    expect(r.json.attempts).toEqual([
      expect.objectContaining({
        tx_hash: `0x${'ee'.repeat(32)}`,
        nonce: '7',
        state: 'broadcast',
        fee: null,
        explorer_url: `https://explorer.test/tx/0x${'ee'.repeat(32)}`,
      }),
      expect.objectContaining({
        tx_hash: reverted,
        nonce: '6',
        state: 'failed',
        fee: '21000000000000',
        fee_native: '0.000021',
        fee_coin: 'ETH',
      }),
    ]);
    expect((await h.call(h.operator, 'GET', '/api/refunds/re_nope')).status).toBe(404);
    expect((await h.call(h.merchantUser(other), 'GET', `/api/refunds/${id}`)).status).toBe(403);
  });
});

describe('POST /api/refunds/:id/retry', () => {
  it('pays a failed refund again as <refund_id>-retry-1, queues it and audits refund.retry; refuses one not failed', async () => {
    const id = await refundOf(shop, '2.00');
    const notFailed = await h.call(h.operator, 'POST', `/api/refunds/${id}/retry`);
    expect(notFailed.status).toBe(400);
    expect(notFailed.json.error.message).toMatch(/only failed refunds can be retried/);
    await failRefund(h.t.db, id, 'insufficient_gas');
    expect((await h.call(h.merchantUser(other), 'POST', `/api/refunds/${id}/retry`)).status).toBe(403);
    const user = h.merchantUser(shop);
    const r = await h.call(user, 'POST', `/api/refunds/${id}/retry`);
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    const old = await h.t.db.selectFrom('refunds').select('refund_id').where('id', '=', id).executeTakeFirstOrThrow();
    expect(r.json.retried).toBe(old.refund_id);
    expect(r.json.refund).toMatchObject({ refund_id: `${old.refund_id}-retry-1`, amount: '2.00', status: 'pending' });
    expect(h.enqueued).toContain(r.json.refund.id);
    const audit = (await auditRows(h.t.db, 'refund.retry')).filter((a) => a.object_id === id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_id: user.userId, merchant_id: shop });
  });
});

describe('POST /api/refunds/:id/settle-from-chain', () => {
  it('is for operators (403 to merchant users), refuses bad input, and without keys says so (no audit row)', async () => {
    const id = await refundOf(shop);
    const denied = await h.call(h.merchantUser(shop), 'POST', `/api/refunds/${id}/settle-from-chain`, { tx_hash: '0x01' });
    expect(denied.status).toBe(403);
    expect((await h.call(h.operator, 'POST', `/api/refunds/${id}/settle-from-chain`, {})).status).toBe(400);
    const r = await h.call(h.operator, 'POST', `/api/refunds/${id}/settle-from-chain`, { tx_hash: '0x01' });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('keys_not_configured');
    expect((await auditRows(h.t.db, 'refund.settle_from_chain')).length).toBe(0);
    expect((await h.call(h.operator, 'POST', '/api/refunds/re_nope/settle-from-chain', { tx_hash: '0x01' })).status).toBe(404);
  });
});
