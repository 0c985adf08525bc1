import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleHarness, startConsoleHarness } from '../support/console-harness.js';
import { strandedListSchema, strandedPreviewSchema, strandedRefundResultSchema } from '../../src/console/contract/stranded.js';
import { auditRows, fakeChains, makeSession } from './console-pay-fixture.js';

// Stranded money: unmatched deposits and what closed-unpaid sessions received; the refund's preview changes nothing,
// the confirmed refund is the CLI's (same default refund_id: asking twice pays once), audited.

let h: ConsoleHarness;
let shop: string;
let other: string;
const SENDER = `0x${'44'.repeat(20)}`;
const TYPED = `0x${'55'.repeat(20)}`;

/** A confirmed deposit of `amountBase` USDT on the test network to `sessionId`. */
async function deposit(sessionId: string | null, amountBase: bigint, disposition: 'credited' | 'unmatched', from = SENDER) {
  const id = `dep_${randomBytes(8).toString('hex')}`;
  await h.t.db
    .insertInto('deposits')
    .values({
      id,
      network: 'ethereum',
      mode: 'test',
      tx_hash: `0x${randomBytes(32).toString('hex')}`,
      log_index: 0,
      block_number: 10n,
      block_hash: `0x${randomBytes(32).toString('hex')}`,
      block_time: new Date(),
      token: 'USDT',
      token_contract: `0x${'ab'.repeat(20)}`,
      from_address: from,
      to_address: `0x${randomBytes(20).toString('hex')}`,
      amount_base: amountBase,
      session_id: sessionId,
      status: 'confirmed',
      disposition,
      unmatched_reason: disposition === 'unmatched' ? 'late' : null,
      confirmed_at: new Date(),
    })
    .execute();
  return id;
}

/** A session that expired after receiving `amountBase` (one credited deposit). */
async function expiredWithMoney(merchantId: string, amountBase: bigint) {
  const id = await makeSession(h.t.db, merchantId);
  await deposit(id, amountBase, 'credited');
  await h.t.db
    .updateTable('payment_sessions')
    .set({ status: 'expired', expired_at: new Date(), network: 'ethereum', token: 'USDT', received_base: amountBase })
    .where('id', '=', id)
    .execute();
  return id;
}

beforeAll(async () => {
  h = await startConsoleHarness({ chains: fakeChains() });
  shop = (await h.merchant('Stranded shop')).merchantId;
  other = (await h.merchant('Other stranded shop')).merchantId;
});
afterAll(async () => {
  await h?.close();
});

describe('GET /api/stranded', () => {
  it('lists unmatched deposits and what expired sessions received, scoped to a merchant user', async () => {
    const late = await makeSession(h.t.db, shop);
    const dep = await deposit(late, 3_000_000n, 'unmatched');
    const expired = await expiredWithMoney(shop, 2_500_000n);
    await deposit(await makeSession(h.t.db, other), 1_000_000n, 'unmatched');

    const deps = await h.call(h.operator, 'GET', `/api/stranded?kind=deposit&merchant_id=${shop}`);
    expect(deps.status, JSON.stringify(deps.json)).toBe(200);
    strandedListSchema.parse(deps.json);
    expect(deps.json.data).toEqual([
      expect.objectContaining({
        kind: 'deposit',
        id: dep,
        merchant_id: shop,
        received: '3.00',
        refundable: '3.00',
        sender: SENDER,
        reason: 'late',
      }),
    ]);
    const sessions = await h.call(h.merchantUser(shop), 'GET', '/api/stranded?kind=session');
    expect(sessions.json.data).toEqual([
      expect.objectContaining({ kind: 'session', id: expired, received: '2.50', refundable: '2.50', sender: SENDER, reason: 'expired' }),
    ]);
    const all = await h.call(h.operator, 'GET', '/api/stranded?limit=1');
    expect(all.json.data).toHaveLength(1);
    expect(all.json.next_cursor).not.toBeNull();
    const next = await h.call(h.operator, 'GET', `/api/stranded?limit=1&cursor=${all.json.next_cursor}`);
    expect(next.json.data[0].id).not.toBe(all.json.data[0].id);

    expect((await h.call(h.merchantUser(other), 'GET', `/api/stranded?merchant_id=${shop}`)).status).toBe(403);
    expect((await h.call(h.operator, 'GET', '/api/stranded?kind=wallet')).status).toBe(400);
  });
});

describe('POST /api/stranded/:kind/:id/refund', () => {
  it('previews without changing anything, then refunds to the sender with confirm:true (audited; twice pays once)', async () => {
    const late = await makeSession(h.t.db, shop);
    const dep = await deposit(late, 4_000_000n, 'unmatched');
    const preview = await h.call(h.operator, 'POST', `/api/stranded/deposit/${dep}/refund`, {});
    expect(preview.status, JSON.stringify(preview.json)).toBe(200);
    expect(strandedPreviewSchema.parse(preview.json)).toEqual({
      preview: true,
      amount: '4.00',
      token: 'USDT',
      network: 'ethereum',
      destination: SENDER,
    });
    expect(await h.t.db.selectFrom('refunds').select('id').where('deposit_id', '=', dep).execute()).toHaveLength(0);
    expect((await auditRows(h.t.db, 'deposit.refund')).filter((a) => a.object_id === dep)).toHaveLength(0);

    const done = await h.call(h.operator, 'POST', `/api/stranded/deposit/${dep}/refund`, { confirm: true });
    expect(done.status, JSON.stringify(done.json)).toBe(200);
    strandedRefundResultSchema.parse(done.json);
    expect(done.json).toMatchObject({
      preview: false,
      replayed: false,
      refund: { refund_id: `deposit-${dep}`, amount: '4.00', deposit_id: dep, destination_address: SENDER },
    });
    expect(h.enqueued).toContain(done.json.refund.id);
    const audit = (await auditRows(h.t.db, 'deposit.refund')).filter((a) => a.object_id === dep);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_id: h.operator.userId, merchant_id: shop });

    const again = await h.call(h.operator, 'POST', `/api/stranded/deposit/${dep}/refund`, { confirm: true });
    expect(again.json).toMatchObject({ replayed: true, refund: { id: done.json.refund.id } });
    expect(await h.t.db.selectFrom('refunds').select('id').where('deposit_id', '=', dep).execute()).toHaveLength(1);
  });

  it('refunds what an expired session received to a typed address, validated per network', async () => {
    const expired = await expiredWithMoney(shop, 2_000_000n);
    const bad = await h.call(h.operator, 'POST', `/api/stranded/session/${expired}/refund`, {
      destination: 'not-an-address',
      confirm: true,
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.param).toBe('destination');
    expect(await h.t.db.selectFrom('refunds').select('id').where('session_id', '=', expired).execute()).toHaveLength(0);
    const preview = await h.call(h.operator, 'POST', `/api/stranded/session/${expired}/refund`, { destination: TYPED, amount: '1.25' });
    expect(preview.json).toMatchObject({ preview: true, amount: '1.25', destination: TYPED });
    const r = await h.call(h.operator, 'POST', `/api/stranded/session/${expired}/refund`, {
      destination: TYPED,
      amount: '1.25',
      confirm: true,
    });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.refund).toMatchObject({
      refund_id: `received-${expired}`,
      amount: '1.25',
      destination_address: TYPED,
      session_id: expired,
    });
    expect((await auditRows(h.t.db, 'session.refund_received')).filter((a) => a.object_id === expired)).toHaveLength(1);
  });

  it('refuses another merchant (403), an unknown id (404) and bad input (400), changing nothing', async () => {
    const dep = await deposit(await makeSession(h.t.db, shop), 1_000_000n, 'unmatched');
    const denied = await h.call(h.merchantUser(other), 'POST', `/api/stranded/deposit/${dep}/refund`, { confirm: true });
    expect(denied.status).toBe(403);
    expect((await h.call(h.operator, 'POST', '/api/stranded/deposit/dep_nope/refund', { confirm: true })).status).toBe(404);
    for (const body of [{ amount: '0' }, { amount: 'x' }, { confirm: 'yes' }, { to: SENDER }]) {
      expect((await h.call(h.operator, 'POST', `/api/stranded/deposit/${dep}/refund`, body)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await h.call(h.operator, 'POST', `/api/stranded/wallet/${dep}/refund`, {})).status).toBe(400);
    expect(await h.t.db.selectFrom('refunds').select('id').where('deposit_id', '=', dep).execute()).toHaveLength(0);
  });
});
