import { sql } from 'kysely';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { depositsCli } from '../../src/cli/payouts.js';
import { sessionsCli } from '../../src/cli/money-back.js';
import { expireSession } from '../../src/ledger/payments/sessions.js';
import { createPayoutScheduler } from '../../src/refunds/payout-worker.js';
import { validateEventEnvelope } from '../../src/domain/events/index.js';
import { AddressWatchSet } from '../../src/watcher/watch-set.js';
import { backgroundMiner, transfersFrom } from '../support/chain-watch.js';
import { fund, payFrom, walletAt, type DeployedToken } from '../support/evm-tokens/scenario.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';

// Money back to customers (issue 16 items 4 and 5), for real: the whole service on Anvil. An unmatched deposit and
// the amount received by a session that expired underpaid are paid back once, from the merchant's hot wallet, through
// the refund rules, the payout engine and refund.* events; sessions and payment events say what they received.
let h: ServiceHarness;
let shop: HarnessMerchant;
let miner: { stop(): void };
let redis: Redis;
let scheduler: ReturnType<typeof createPayoutScheduler>;
const outputs: unknown[] = [];
let ctx: Parameters<typeof depositsCli>[1];
let payerIndex = 40;

beforeAll(async () => {
  h = await startServiceHarness({ extraEnv: { EXPIRY_SWEEP_INTERVAL_MS: '500' } });
  shop = await h.newMerchant('Money back');
  await h.node.rpc('anvil_setBalance', [shop.hotWallet, `0x${(10n ** 19n).toString(16)}`]);
  await fund(h.tokens.USDT, shop.hotWallet, 1_000_000_000n);
  await fund(h.tokens.USDC, shop.hotWallet, 1_000_000_000n);
  miner = backgroundMiner(h.node);
  redis = new Redis(h.env.REDIS_URL!);
  scheduler = createPayoutScheduler({ connection: redis, prefix: h.env.REDIS_KEY_PREFIX! });
  const { signer } = await import('../support/evm-tokens/scenario.js');
  ctx = {
    db: h.t.db,
    adapters: async () => h.service.adapters,
    keys: signer,
    enqueue: (id: string) => scheduler.enqueue(id),
    out: (v: unknown) => outputs.push(v),
  };
});
afterAll(async () => {
  miner?.stop();
  await scheduler?.close();
  redis?.disconnect();
  await h?.close();
});

/** A session for `amount` USD with ethereum + token selected: its id and deposit address. */
async function selectedSession(amount: string, token: 'USDT' | 'USDC' = 'USDT') {
  const c = (
    await shop.client.post('/api/v1/checkout/sessions/create', { amount, currency: 'USD', order_id: `mb-${Date.now()}-${payerIndex}` })
  ).json;
  const sel = (await (
    await fetch(`${h.base}/checkout/sessions/${c.id}/select`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'ethereum', token }),
    })
  ).json()) as { deposit_address: string };
  return { id: c.id as string, address: sel.deposit_address };
}

/** Pays `amount` base units of `token` from a fresh payer; answers the payer (lowercase) and the transaction hash. */
async function pay(token: DeployedToken, to: string, amount: bigint) {
  const payer = walletAt(payerIndex++, h.node.provider);
  await h.node.rpc('anvil_setBalance', [payer.address, '0xde0b6b3a7640000']);
  await fund(token, payer.address, amount);
  const tx = await payFrom(payer, token, to, amount);
  return { payer: payer.address.toLowerCase(), tx };
}

const depositOf = (tx: string) =>
  h.until(async () =>
    h.t.db.selectFrom('deposits').selectAll().where('tx_hash', '=', tx).where('status', '=', 'confirmed').executeTakeFirst(),
  );

async function settled(refundId: string) {
  return h.until(async () => {
    const r = await shop.client.get(`/api/v1/refunds/${refundId}`);
    return r.json.status === 'completed' || r.json.status === 'failed' ? r.json : undefined;
  }, 45_000);
}

const eventsOf = (aggregateId: string) =>
  h.t.db.selectFrom('outbox_events').select(['type', 'payload']).where('aggregate_id', '=', aggregateId).orderBy('seq').execute();

describe('refund of an unmatched deposit', () => {
  it('pays a deposit to a canceled session back once to its sender, even when the command runs twice at once', async () => {
    const s = await selectedSession('1.00');
    expect((await shop.client.post(`/api/v1/checkout/sessions/${s.id}/cancel`)).status).toBe(200);
    const { payer, tx } = await pay(h.tokens.USDT, s.address, 1_250_000n);
    const dep = await depositOf(tx);
    expect(dep).toMatchObject({ disposition: 'unmatched', unmatched_reason: 'session_canceled' });

    // The session says what arrived, even though it paid nothing (extension `payments`).
    const view = (await shop.client.get(`/api/v1/checkout/sessions/${s.id}`)).json;
    expect(view.amount_received).toBe('0.00');
    expect(view.payments).toEqual([
      {
        id: dep.id,
        network: 'ethereum',
        token: 'USDT',
        transaction_hash: tx,
        amount: '1.25',
        amount_base: '1250000',
        sender: expect.stringMatching(/^0x/),
        confirmed_at: expect.any(Number),
        status: 'unmatched',
        unmatched_reason: 'session_canceled',
      },
    ]);
    expect(view.payments[0].sender.toLowerCase()).toBe(payer);

    await Promise.all([depositsCli(['refund', dep.id], ctx), depositsCli(['refund', dep.id], ctx)]);
    const runs = outputs.splice(0) as Array<{ replayed: boolean; refund_id: string; amount: string; deposit_id: string }>;
    expect(runs.map((r) => r.replayed).sort()).toEqual([false, true]);
    expect(runs.find((r) => !r.replayed)).toMatchObject({
      refund_id: `deposit-${dep.id}`,
      amount: '1.25',
      deposit_id: dep.id,
      status: 'pending',
    });
    const rows = await h.t.db.selectFrom('refunds').selectAll().where('deposit_id', '=', dep.id).execute();
    expect(rows).toHaveLength(1);

    const done = await settled(rows[0]!.refund_id);
    expect(done).toMatchObject({ status: 'completed', deposit_id: dep.id, session_id: s.id, amount: 125, amount_delivered: 125 });
    expect(await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet, payer)).toEqual([
      { to: payer, amount: 1_250_000n, tx: done.transaction_hash },
    ]);
    const events = await eventsOf(done.id);
    expect(events.map((e) => e.type)).toEqual(['refund.succeeded']);
    expect((events[0]!.payload as any).data.object).toMatchObject({ deposit_id: dep.id, refund_amount: 125, status: 'completed' });
    expect(validateEventEnvelope(events[0]!.payload)).toEqual([]);

    // Running the command again answers the same refund and pays nothing more.
    await depositsCli(['refund', dep.id], ctx);
    expect(outputs.pop()).toMatchObject({ replayed: true, id: done.id });
    expect(await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet, payer)).toHaveLength(1);
    // The operator's list shows the deposit with its refund.
    await depositsCli(['unmatched', '--mode', 'test', '--network', 'ethereum'], ctx);
    const listed = (outputs.pop() as any[]).find((r) => r.id === dep.id);
    expect(listed.refunds).toEqual([
      { refund_id: `deposit-${dep.id}`, status: 'completed', amount: '1.25', transaction_hash: done.transaction_hash },
    ]);
    // An unknown deposit is refused with a clear error.
    await expect(depositsCli(['refund', 'dep_nope'], ctx)).rejects.toThrow(/no deposit dep_nope/);
  });

  it('via the API (deposit_id): two concurrent full refunds give one refund, paid to the given address', async () => {
    const paid = await h.paidSession(shop, { amount: '1.00', token: 'USDC' });
    const addr = (await h.t.db.selectFrom('payment_sessions').select('deposit_address').where('id', '=', paid.id).executeTakeFirstOrThrow())
      .deposit_address!;
    const { tx } = await pay(h.tokens.USDC, addr, 700_000n); // a second payment to a paid session: unmatched
    const dep = await depositOf(tx);
    expect(dep).toMatchObject({ disposition: 'unmatched', unmatched_reason: 'session_paid' });

    const to = walletAt(77, h.node.provider).address;
    const body = (refund_id: string) => ({ deposit_id: dep.id, refund_id, amount: 70, currency: 'USDC', destination_address: to });
    const [a, b] = await Promise.all([
      shop.client.post('/api/v1/refunds/create', body(`api-a-${dep.id}`)),
      shop.client.post('/api/v1/refunds/create', body(`api-b-${dep.id}`)),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 400]);
    const loser = a.status === 400 ? a : b;
    expect(loser.json.error.code).toBe('REFUND_AMOUNT_EXCEEDED');
    const winner = a.status === 201 ? a : b;
    expect(winner.json).toMatchObject({ deposit_id: dep.id, session_id: paid.id, amount: 70, currency: 'USDC' });
    expect(winner.json.destination_address.toLowerCase()).toBe(to.toLowerCase());

    // The same refund_id and body replays; wrong currency, a credited deposit, another merchant: clear refusals.
    const replay = await shop.client.post('/api/v1/refunds/create', body(winner.json.refund_id));
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const usdt = await shop.client.post('/api/v1/refunds/create', { ...body('api-c'), currency: 'USDT' });
    expect(usdt.json.error.code).toBe('INVALID_CURRENCY');
    const credited = await h.t.db
      .selectFrom('deposits')
      .select('id')
      .where('session_id', '=', paid.id)
      .where('disposition', '=', 'credited')
      .executeTakeFirstOrThrow();
    const creditedRefund = await shop.client.post('/api/v1/refunds/create', { ...body('api-d'), deposit_id: credited.id });
    expect(creditedRefund.status).toBe(400);
    expect(creditedRefund.json.error.code).toBe('INVALID_DEPOSIT_STATUS');
    const other = await h.newMerchant('Other');
    const foreign = await other.client.post('/api/v1/refunds/create', body('api-e'));
    expect(foreign.status).toBe(403);
    expect((await shop.client.post('/api/v1/refunds/create', { ...body('api-f'), deposit_id: 'dep_missing' })).status).toBe(404);

    const done = await settled(winner.json.refund_id);
    expect(done.status).toBe('completed');
    expect(await transfersFrom(h.node, h.tokens.USDC.address, shop.hotWallet, to)).toEqual([
      { to: to.toLowerCase(), amount: 700_000n, tx: done.transaction_hash },
    ]);
    // The session's own refundable amount is untouched by the deposit's refund: the full 1.00 can still be refunded.
    const own = await shop.client.post('/api/v1/refunds/create', {
      session_id: paid.id,
      refund_id: `own-${paid.id}`,
      amount: 100,
      currency: 'USDC',
    });
    expect(own.status).toBe(201);
    expect((await settled(own.json.refund_id)).status).toBe('completed');
  });
});

describe('retry of a failed deposit refund', () => {
  it('a refund of a deposit that failed (empty hot wallet) is retried against the same deposit', async () => {
    const { payoutsCli } = await import('../../src/cli/payouts.js');
    const poor = await h.newMerchant('Empty wallet');
    await h.node.rpc('anvil_setBalance', [poor.hotWallet, `0x${(10n ** 18n).toString(16)}`]);
    const c = (
      await poor.client.post('/api/v1/checkout/sessions/create', { amount: '1.00', currency: 'USD', order_id: `poor-${payerIndex}` })
    ).json;
    const sel = (await (
      await fetch(`${h.base}/checkout/sessions/${c.id}/select`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ network: 'ethereum', token: 'USDT' }),
      })
    ).json()) as { deposit_address: string };
    expect((await poor.client.post(`/api/v1/checkout/sessions/${c.id}/cancel`)).status).toBe(200);
    const { payer, tx } = await pay(h.tokens.USDT, sel.deposit_address, 400_000n);
    const dep = await depositOf(tx);
    await depositsCli(['refund', dep.id], ctx);
    const first = outputs.pop() as any;
    const failed = await h.until(async () => {
      const r = await poor.client.get(`/api/v1/refunds/${first.refund_id}`);
      return r.json.status === 'failed' ? r.json : undefined;
    }, 45_000);
    expect(failed.failure_reason).toMatch(/does not hold enough of the token/);
    await fund(h.tokens.USDT, poor.hotWallet, 400_000n);
    await payoutsCli(['retry', first.refund_id, '--merchant', poor.id], ctx);
    expect(outputs.pop()).toMatchObject({ refund_id: `${first.refund_id}-retry-1` });
    const retried = await h.until(async () => {
      const r = await poor.client.get(`/api/v1/refunds/${first.refund_id}-retry-1`);
      return r.json.status === 'completed' ? r.json : undefined;
    }, 45_000);
    expect(retried).toMatchObject({ deposit_id: dep.id, amount: 40 });
    expect(await transfersFrom(h.node, h.tokens.USDT.address, poor.hotWallet, payer)).toEqual([
      { to: payer, amount: 400_000n, tx: retried.transaction_hash },
    ]);
  });
});

describe('refund of what an underpaid session received before it expired', () => {
  it('expires with amount_received and payments in payment.expired, then refunds it once (no more INVALID_SESSION_STATUS)', async () => {
    const s = await selectedSession('5.00');
    const { payer, tx } = await pay(h.tokens.USDT, s.address, 2_000_000n);
    await depositOf(tx);
    await h.t.db.updateTable('payment_sessions').set({ expires_at: sql`now() - interval '1 second'` }).where('id', '=', s.id).execute();
    await h.until(async () => {
      await expireSession(h.t.db, s.id, { tokenDecimals: h.service.adapters.tokenDecimals });
      const row = await h.t.db.selectFrom('payment_sessions').select('status').where('id', '=', s.id).executeTakeFirstOrThrow();
      return row.status === 'expired' ? true : undefined;
    });
    const expired = (await eventsOf(s.id)).find((e) => e.type === 'payment.expired')!;
    const object = (expired.payload as any).data.object;
    expect(validateEventEnvelope(expired.payload)).toEqual([]);
    expect(object).toMatchObject({
      amount: '2.00',
      currency: 'USDT',
      status: 'expired',
      amount_received: '2.00',
      amount_received_base: '2000000',
      received_currency: 'USDT',
      remaining_amount: '3.00',
      remaining_amount_base: '3000000',
    });
    expect(object.payments).toHaveLength(1);
    expect(object.payments[0]).toMatchObject({
      transaction_hash: tx,
      amount: '2.00',
      status: 'credited',
      network: 'ethereum',
      token: 'USDT',
    });
    expect(object.payments[0].sender.toLowerCase()).toBe(payer);

    const view = (await shop.client.get(`/api/v1/checkout/sessions/${s.id}`)).json;
    expect(view).toMatchObject({ status: 'expired', amount_received: '2.00', remaining_amount: '3.00' });
    expect(view.payments.map((p: any) => p.transaction_hash)).toEqual([tx]);

    const refund = (refund_id: string, amount: number) =>
      shop.client.post('/api/v1/refunds/create', { session_id: s.id, refund_id, amount, currency: 'USDT' });
    expect((await refund(`too-much-${s.id}`, 201)).json.error.code).toBe('REFUND_AMOUNT_EXCEEDED');
    const [first, again] = await Promise.all([refund(`back-${s.id}`, 200), refund(`back-${s.id}`, 200)]);
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(first.json.id).toBe(again.json.id);
    expect(await h.t.db.selectFrom('refunds').select('id').where('session_id', '=', s.id).execute()).toHaveLength(1);
    const done = await settled(first.json.refund_id);
    expect(done).toMatchObject({ status: 'completed', session_id: s.id, amount: 200 });
    expect(done.deposit_id).toBeUndefined();
    expect(await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet, payer)).toEqual([
      { to: payer, amount: 2_000_000n, tx: done.transaction_hash },
    ]);
    expect((await eventsOf(done.id)).map((e) => e.type)).toEqual(['refund.succeeded']);

    // The operator command finds nothing left.
    await expect(sessionsCli(['refund-received', s.id], ctx)).rejects.toThrow(/nothing left to refund/);
    // An open session still cannot be refunded.
    const open = await selectedSession('1.00');
    const r = await shop.client.post('/api/v1/refunds/create', {
      session_id: open.id,
      refund_id: `open-${open.id}`,
      amount: 1,
      currency: 'USDT',
    });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('INVALID_SESSION_STATUS');
  });

  it('the operator command pays back an expired session paid by several senders only with --to', async () => {
    const s = await selectedSession('9.00', 'USDC');
    const one = await pay(h.tokens.USDC, s.address, 1_000_000n);
    const two = await pay(h.tokens.USDC, s.address, 2_000_000n);
    await depositOf(one.tx);
    await depositOf(two.tx);
    await h.t.db.updateTable('payment_sessions').set({ expires_at: sql`now() - interval '1 second'` }).where('id', '=', s.id).execute();
    await h.until(async () =>
      (await expireSession(h.t.db, s.id, { tokenDecimals: h.service.adapters.tokenDecimals })) === 'expired' ||
      (await h.t.db.selectFrom('payment_sessions').select('status').where('id', '=', s.id).executeTakeFirstOrThrow()).status === 'expired'
        ? true
        : undefined,
    );
    await expect(sessionsCli(['refund-received', s.id], ctx)).rejects.toThrow(/several senders; give destination_address/);
    const to = walletAt(78, h.node.provider).address;
    await sessionsCli(['refund-received', s.id, '--to', to], ctx);
    const out = outputs.pop() as any;
    expect(out).toMatchObject({ replayed: false, refund_id: `received-${s.id}`, amount: '3.00', currency: 'USDC' });
    const done = await settled(out.refund_id);
    expect(done.status).toBe('completed');
    expect(await transfersFrom(h.node, h.tokens.USDC.address, shop.hotWallet, to)).toEqual([
      { to: to.toLowerCase(), amount: 3_000_000n, tx: done.transaction_hash },
    ]);
  });
});

describe('what a session received, in payment.completed', () => {
  it('an overpaid session names the overpaid amount and each transfer', async () => {
    const s = await h.paidSession(shop, { amount: '1.00', paid: 1_500_000n });
    const completed = (await eventsOf(s.id)).find((e) => e.type === 'payment.completed')!;
    const object = (completed.payload as any).data.object;
    expect(validateEventEnvelope(completed.payload)).toEqual([]);
    expect(object).toMatchObject({ amount_received: '1.50', overpaid_amount: '0.50', overpaid_amount_base: '500000' });
    expect(object.remaining_amount).toBeUndefined();
    expect(object.payments).toEqual([expect.objectContaining({ amount: '1.50', status: 'credited' })]);
    expect(object.payments[0].sender.toLowerCase()).toBe(s.payer);
  });
});

describe('late payments stay watched while their address holds money not yet refunded', () => {
  it('keeps a long-closed address with an unrefunded deposit, drops it once refunded, and drops an empty one', async () => {
    const held = await selectedSession('1.00');
    expect((await shop.client.post(`/api/v1/checkout/sessions/${held.id}/cancel`)).status).toBe(200);
    const { tx } = await pay(h.tokens.USDT, held.address, 500_000n);
    const dep = await depositOf(tx);
    const empty = await selectedSession('1.00');
    expect((await shop.client.post(`/api/v1/checkout/sessions/${empty.id}/cancel`)).status).toBe(200);
    // Both closed 40 days ago: past the 30-day window.
    await h.t.db
      .updateTable('payment_sessions')
      .set({ canceled_at: sql`now() - interval '40 days'`, expires_at: sql`now() - interval '40 days'` })
      .where('id', 'in', [held.id, empty.id])
      .execute();
    const lower = (a: string) => a.toLowerCase();
    const watchSet = async () => {
      const w = new AddressWatchSet(h.t.db, { network: 'ethereum', mode: 'test' }, 30);
      await w.sync();
      return new Set([...w.addresses()].map(lower));
    };
    let watched = await watchSet();
    expect(watched.has(lower(held.address))).toBe(true);
    expect(watched.has(lower(empty.address))).toBe(false);

    await depositsCli(['refund', dep.id], ctx);
    const out = outputs.pop() as any;
    expect((await settled(out.refund_id)).status).toBe('completed');
    watched = await watchSet();
    expect(watched.has(lower(held.address))).toBe(false);
  });
});
