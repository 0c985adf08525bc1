import { Contract } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backgroundMiner, transfersFrom } from '../support/chain-watch.js';
import { fund, walletAt } from '../support/evm-tokens/scenario.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';

// Refund payouts for real: the whole service on an Anvil node, paying refunds from each merchant's hot wallet.
let h: ServiceHarness;
let shop: HarnessMerchant;
let miner: { stop(): void };
let n = 0;

beforeAll(async () => {
  h = await startServiceHarness({ extraEnv: { PAYOUT_STUCK_AFTER_MS: '1500' } });
  shop = await h.newMerchant('Refunder');
  await fundHotWallet(shop);
  miner = backgroundMiner(h.node);
});
afterAll(async () => {
  miner?.stop();
  await h?.close();
});

async function fundHotWallet(m: HarnessMerchant, o: { eth?: bigint; usdt?: bigint; usdc?: bigint } = {}) {
  if ((o.eth ?? 10n ** 19n) > 0n) await h.node.rpc('anvil_setBalance', [m.hotWallet, `0x${(o.eth ?? 10n ** 19n).toString(16)}`]);
  if ((o.usdt ?? 1_000_000_000n) > 0n) await fund(h.tokens.USDT, m.hotWallet, o.usdt ?? 1_000_000_000n);
  if ((o.usdc ?? 1_000_000_000n) > 0n) await fund(h.tokens.USDC, m.hotWallet, o.usdc ?? 1_000_000_000n);
}

const createRefund = (m: HarnessMerchant, body: Record<string, unknown>) =>
  m.client.post('/api/v1/refunds/create', { refund_id: `rf-${Date.now()}-${n++}`, ...body });

async function settled(m: HarnessMerchant, refundId: string) {
  return h.until(async () => {
    const r = await m.client.get(`/api/v1/refunds/${refundId}`);
    return r.json.status === 'completed' || r.json.status === 'failed' ? r.json : undefined;
  }, 45_000);
}

const refundEvents = (refundInternalId: string) =>
  h.t.db.selectFrom('outbox_events').select(['type', 'payload']).where('aggregate_id', '=', refundInternalId).execute();

describe('refund payouts on chain', () => {
  it('pays a full refund once, from the hot wallet to the payer, with hash, receipt and refund.succeeded (Tether-style USDT)', async () => {
    const s = await h.paidSession(shop, { amount: '10.00', token: 'USDT' });
    const created = await createRefund(shop, { session_id: s.id, amount: 1000, currency: 'USDT' });
    expect(created.status).toBe(201);
    const done = await settled(shop, created.json.refund_id);
    expect(done).toMatchObject({
      status: 'completed',
      failure_reason: null,
      destination_address: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
    });
    expect(done.transaction_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(done.receipt_number).toMatch(/^RCPT-\d{8}-\d{6}$/);
    expect(done.processed_at).toBeGreaterThanOrEqual(done.created_at);
    const moved = await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet, s.payer);
    expect(moved).toEqual([{ to: s.payer, amount: 10_000_000n, tx: done.transaction_hash }]);
    const events = await refundEvents(done.id);
    expect(events.map((e) => e.type)).toEqual(['refund.succeeded']);
    expect((events[0]!.payload as any).data.object).toEqual({
      session_id: s.id,
      order_id: done.order_id,
      refund_id: done.refund_id,
      refund_amount: 1000,
      refund_currency: 'USDT',
      status: 'completed',
      source: 'api',
      amount_delivered: 1000,
    });
  });

  it('pays several partial refunds up to the amount paid, each once, on consecutive nonces', async () => {
    const s = await h.paidSession(shop, { amount: '9.00', token: 'USDC' });
    const ids = [];
    for (const amount of [200, 300, 400])
      ids.push((await createRefund(shop, { session_id: s.id, amount, currency: 'USDC' })).json.refund_id);
    expect((await createRefund(shop, { session_id: s.id, amount: 1, currency: 'USDC' })).json.error.code).toBe('REFUND_AMOUNT_EXCEEDED');
    for (const id of ids) expect((await settled(shop, id)).status).toBe('completed');
    const moved = await transfersFrom(h.node, h.tokens.USDC.address, shop.hotWallet, s.payer);
    expect(moved.map((m) => m.amount).sort()).toEqual([2_000_000n, 3_000_000n, 4_000_000n]);
    const nonces = await h.t.db
      .selectFrom('payout_attempts')
      .select('nonce')
      .where('sender', '=', shop.hotWallet.toLowerCase())
      .where('state', '=', 'confirmed')
      .execute();
    const sorted = nonces.map((r) => r.nonce!).sort((a, b) => (a < b ? -1 : 1));
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]! - sorted[i - 1]!).toBe(1n); // no gaps
  });

  it('fails with a clear reason when the token refuses the destination (USDC blacklist), paying nothing', async () => {
    const s = await h.paidSession(shop, { amount: '3.00', token: 'USDC' });
    const usdc = new Contract(h.tokens.USDC.address, ['function blacklist(address who)'], walletAt(0, h.node.provider));
    await (await (usdc.getFunction('blacklist') as (a: string) => Promise<{ wait(): Promise<unknown> }>)(s.payer)).wait();
    const created = await createRefund(shop, { session_id: s.id, amount: 300, currency: 'USDC' });
    const done = await settled(shop, created.json.refund_id);
    expect(done.status).toBe('failed');
    expect(done.failure_reason).toMatch(/refused the transfer/);
    expect(done.transaction_hash).toBeNull();
    expect(await transfersFrom(h.node, h.tokens.USDC.address, shop.hotWallet, s.payer)).toEqual([]);
    expect((await refundEvents(done.id)).map((e) => e.type)).toEqual(['refund.failed']);
    expect((await refundEvents(done.id))[0]!.payload).toMatchObject({ data: { object: { status: 'failed', refund_amount: 300 } } });
  });

  it('fails without gas or without tokens in the hot wallet, paying nothing', async () => {
    const poor = await h.newMerchant('Poor');
    await fundHotWallet(poor, { eth: 0n, usdt: 10_000_000n, usdc: 0n });
    const s1 = await h.paidSession(poor, { amount: '2.00' });
    const noGas = await settled(poor, (await createRefund(poor, { session_id: s1.id, amount: 200, currency: 'USDT' })).json.refund_id);
    expect(noGas.status).toBe('failed');
    expect(noGas.failure_reason).toMatch(/enough native coin to pay the network fee/);

    const broke = await h.newMerchant('Broke');
    await fundHotWallet(broke, { eth: 10n ** 18n, usdt: 0n, usdc: 0n });
    const s2 = await h.paidSession(broke, { amount: '2.00' });
    const noTokens = await settled(broke, (await createRefund(broke, { session_id: s2.id, amount: 200, currency: 'USDT' })).json.refund_id);
    expect(noTokens.status).toBe('failed');
    expect(noTokens.failure_reason).toMatch(/does not hold enough of the token/);
    expect(await transfersFrom(h.node, h.tokens.USDT.address, broke.hotWallet)).toEqual([]);
    expect(await transfersFrom(h.node, h.tokens.USDT.address, poor.hotWallet)).toEqual([]);
  });

  it('replaces a stuck transaction at the same nonce with a higher fee, completes once, and cannot be canceled once signed', async () => {
    const s = await h.paidSession(shop, { amount: '5.00', token: 'USDT' });
    miner.stop();
    await h.node.rpc('evm_setAutomine', [false]);
    try {
      const created = await createRefund(shop, { session_id: s.id, amount: 500, currency: 'USDT' });
      const attempts = await h.until(async () => {
        const rows = await h.t.db
          .selectFrom('payout_attempts')
          .selectAll()
          .where('refund_id', '=', created.json.id)
          .orderBy('id')
          .execute();
        return rows.length >= 2 ? rows : undefined;
      }, 20_000);
      expect(attempts[0]!.nonce).toBe(attempts[1]!.nonce);
      expect(attempts[1]!.fee_bump_percent).toBeGreaterThan(attempts[0]!.fee_bump_percent);
      const cancel = await shop.client.post(`/api/v1/refunds/${created.json.refund_id}/cancel`);
      expect(cancel.status).toBe(400);
      expect(cancel.json.error.code).toBe('CANNOT_CANCEL_REFUND');
      await h.node.rpc('evm_setAutomine', [true]);
      miner = backgroundMiner(h.node);
      const done = await settled(shop, created.json.refund_id);
      expect(done.failure_reason).toBeNull();
      expect(done.status).toBe('completed');
      const moved = await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet, s.payer);
      expect(moved).toHaveLength(1);
      expect(moved[0]!.amount).toBe(5_000_000n);
      expect(attempts.map((a) => a.tx_hash)).toContain(done.transaction_hash);
    } finally {
      await h.node.rpc('evm_setAutomine', [true]);
    }
  });
});

describe('operator commands for payouts', () => {
  it('shows hot wallets with balances, lists pending payouts, and retries a failed refund as a new one', async () => {
    const { payoutsCli, depositsCli } = await import('../../src/cli/payouts.js');
    const { signer } = await import('../support/evm-tokens/scenario.js');
    const { createPayoutScheduler } = await import('../../src/refunds/payout-worker.js');
    const { Redis } = await import('ioredis');
    const redis = new Redis(h.env.REDIS_URL!);
    const scheduler = createPayoutScheduler({ connection: redis, prefix: h.env.REDIS_KEY_PREFIX! });
    const outputs: unknown[] = [];
    const ctx = {
      db: h.t.db,
      adapters: async () => h.service.adapters,
      keys: signer,
      enqueue: (id: string) => scheduler.enqueue(id),
      out: (v: unknown) => outputs.push(v),
    };
    try {
      const m = await h.newMerchant('Operator view');
      await fundHotWallet(m, { eth: 10n ** 18n, usdt: 0n, usdc: 5_000_000n });
      await payoutsCli(['wallets', '--merchant', m.id], ctx);
      const wallets = outputs.pop() as any[];
      const testWallet = wallets.find((w) => w.mode === 'test' && w.network === 'ethereum');
      expect(testWallet.address.toLowerCase()).toBe(m.hotWallet.toLowerCase());
      expect(testWallet.native_base_units).toBe(String(10n ** 18n));
      expect(testWallet.tokens).toEqual({ USDT: '0.00', USDC: '5.00' });

      const s = await h.paidSession(m, { amount: '2.00', token: 'USDT' });
      const failedRefund = await settled(
        m,
        (await createRefund(m, { session_id: s.id, amount: 200, currency: 'USDT', refund_id: 'op-1' })).json.refund_id,
      );
      expect(failedRefund.status).toBe('failed');
      await fund(h.tokens.USDT, m.hotWallet, 2_000_000n);
      await payoutsCli(['retry', 'op-1', '--merchant', m.id], ctx);
      expect(outputs.pop()).toMatchObject({ retried: 'op-1', refund_id: 'op-1-retry-1', status: 'pending' });
      const retried = await settled(m, 'op-1-retry-1');
      expect(retried.status).toBe('completed');
      expect(await transfersFrom(h.node, h.tokens.USDT.address, m.hotWallet, s.payer)).toHaveLength(1);
      await expect(payoutsCli(['retry', 'op-1-retry-1', '--merchant', m.id], ctx)).rejects.toThrow(/only failed refunds/);

      await payoutsCli(['pending', '--merchant', m.id], ctx);
      expect(outputs.pop()).toEqual([]);
      // A payment to a canceled session becomes an unmatched deposit on the operator's list.
      const c = (await m.client.post('/api/v1/checkout/sessions/create', { amount: '1.00', currency: 'USD', order_id: 'late-1' })).json;
      const sel = (await (
        await fetch(`${h.base}/checkout/sessions/${c.id}/select`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ network: 'ethereum', token: 'USDT' }),
        })
      ).json()) as { deposit_address: string };
      expect((await m.client.post(`/api/v1/checkout/sessions/${c.id}/cancel`)).status).toBe(200);
      const payer = walletAt(3, h.node.provider);
      await fund(h.tokens.USDT, payer.address, 1_000_000n);
      const { payFrom } = await import('../support/evm-tokens/scenario.js');
      const tx = await payFrom(payer, h.tokens.USDT, sel.deposit_address, 1_000_000n);
      const listed = await h.until(async () => {
        await depositsCli(['unmatched', '--mode', 'test', '--network', 'ethereum'], ctx);
        const rows = outputs.pop() as any[];
        return rows.find((r) => r.txHash === tx);
      });
      expect(listed).toMatchObject({ sessionId: c.id, reason: 'session_canceled', amountBase: '1000000', token: 'USDT' });
    } finally {
      await scheduler.close();
      redis.disconnect();
    }
  });
});
