import { Contract } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeTronAddress, tronBase58 } from '../../chains/tron/address.js';
import type { ChainHarnessMerchant } from '../support/chain-service-harness.js';
import { startTronServiceHarness, type TronServiceHarness } from '../support/tron-service-harness.js';
import { walletAt, type DeployedToken } from '../support/evm-tokens/scenario.js';

// Refunds on TRON for real: the whole service (src/main.ts) in test mode, detection through Anvil's JSON-RPC standing
// in for java-tron's, payouts through the fake java-tron wallet API (signature checked, transfer executed on Anvil).
const TRON_B58 = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;
const TXID = /^[0-9a-f]{64}$/;
const tronEvm = (canonical: string) => `0x${canonical.slice(2)}`;

type Send = (...args: unknown[]) => Promise<{ wait(): Promise<unknown> }>;
let issuerNode: TronServiceHarness['node'];
/** An owner-only call on a test token (deployed by Anvil account 0 on the node the fake java-tron executes on). */
async function asIssuer(token: DeployedToken, signature: string, ...args: unknown[]): Promise<void> {
  const c = new Contract(token.address, [`function ${signature}`], walletAt(0, issuerNode.provider));
  await (await (c.getFunction(signature.slice(0, signature.indexOf('('))) as Send)(...args)).wait();
}

describe('TRON refunds, service in one process', () => {
  let h: TronServiceHarness;
  let shop: ChainHarnessMerchant;
  beforeAll(async () => {
    h = await startTronServiceHarness();
    issuerNode = h.node;
    shop = await h.newMerchant('Tron shop');
    await h.fundHotWallet(shop);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('takes a payment through the selection endpoint and shows it paid, with base58 addresses', async () => {
    const sel = await h.selectSession(shop, { amount: '2.50', token: 'USDT' });
    expect(sel.deposit_address).toMatch(TRON_B58);
    expect(sel.raw.token_contract).toBe(tronBase58(normalizeTronAddress(h.tokens.USDT.address.replace(/^0x/, '41'))!));
    expect(sel.amount_due_base).toBe('2500000');
    const s = await h.paidSession(shop, { amount: '2.50', token: 'USDT' });
    expect(s.depositAddress).toMatch(TRON_B58);
    const got = await shop.client.get(`/api/v1/checkout/sessions/${s.id}`);
    expect(got.json.payment_status).toBe('paid');
    expect(JSON.stringify(got.json)).not.toMatch(/"41[0-9a-f]{40}"/); // never the internal hex form
  });

  it('pays a refund once from the hot wallet to the payer: txID, receipt, refund.succeeded', async () => {
    const s = await h.paidSession(shop, { amount: '10.00', token: 'USDT' });
    const created = await h.createRefund(shop, { session_id: s.id, amount: 1000, currency: 'USDT' });
    expect(created.status).toBe(201);
    expect(created.json.destination_address).toBe(s.payerBase58);
    const done = await h.settled(shop, created.json.refund_id);
    expect(done).toMatchObject({ status: 'completed', failure_reason: null, destination_address: s.payerBase58 });
    expect(done.transaction_hash).toMatch(TXID);
    expect(done.receipt_number).toMatch(/^RCPT-\d{8}-\d{6}$/);
    const onChain = h.fake.chain.txs.get(done.transaction_hash);
    expect(onChain?.contractRet).toBe('SUCCESS');
    expect(onChain?.raw?.owner).toBe(shop.hotWallet);
    const moved = await h.transfers('USDT', shop.hotWallet, s.payer);
    expect(moved.map((m) => m.amount)).toEqual([10_000_000n]);
    const events = await h.refundEvents(done.id);
    expect(events.map((e) => e.type)).toEqual(['refund.succeeded']);
    expect((events[0]!.payload as any).data.object).toMatchObject({
      session_id: s.id,
      refund_id: done.refund_id,
      refund_amount: 1000,
      refund_currency: 'USDT',
      status: 'completed',
    });
    const attempts = await h.t.db.selectFrom('payout_attempts').selectAll().where('refund_id', '=', done.id).execute();
    expect(attempts.map((a) => [a.state, a.nonce, a.tx_hash])).toEqual([['confirmed', null, done.transaction_hash]]);
    const listed = await shop.client.get(`/api/v1/refunds?session_id=${s.id}`);
    expect(JSON.stringify(listed.json)).toContain(s.payerBase58);
    expect(JSON.stringify(listed.json)).not.toContain(s.payer);
  });

  it('pays a USDC refund to an explicit base58 destination', async () => {
    const s = await h.paidSession(shop, { amount: '3.00', token: 'USDC' });
    const other = tronBase58(`41${'ab'.repeat(20)}`);
    const created = await h.createRefund(shop, { session_id: s.id, amount: 150, currency: 'USDC', destination_address: other });
    expect(created.status).toBe(201);
    const done = await h.settled(shop, created.json.refund_id);
    expect(done).toMatchObject({ status: 'completed', destination_address: other });
    expect((await h.transfers('USDC', shop.hotWallet, other)).map((m) => m.amount)).toEqual([1_500_000n]);
    expect(await h.transfers('USDC', shop.hotWallet, s.payer)).toEqual([]);
  });

  it('shows the operator the hot wallet with TRX, tokens, energy and bandwidth', async () => {
    const { payoutsCli } = await import('../../src/cli/payouts.js');
    const { testSigner } = await import('../support/chain-service-harness.js');
    const out: unknown[] = [];
    await payoutsCli(['wallets', '--merchant', shop.id], {
      db: h.t.db,
      adapters: async () => h.service.adapters,
      keys: testSigner,
      enqueue: async () => {},
      out: (v) => out.push(v),
    });
    const row = (out[0] as any[]).find((w) => w.network === 'tron' && w.mode === 'test');
    expect(row.address).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    expect(BigInt(row.native_base_units)).toBeGreaterThan(0n);
    expect(row.fee_resources).toMatchObject({ activated: true, energy: expect.any(Object), bandwidth: expect.any(Object) });
    expect(typeof row.fee_resources.summary).toBe('string');
  });

  it("grosses a refund up under Tether's fee so the payer receives exactly the refund amount (issue 13 item 18)", async () => {
    const s = await h.paidSession(shop, { amount: '5.00', token: 'USDT' });
    await asIssuer(h.tokens.USDT, 'setParams(uint256 newBasisPoints, uint256 newMaxFee)', 10n, 1_000_000n);
    try {
      const done = await h.settled(shop, (await h.createRefund(shop, { session_id: s.id, amount: 500, currency: 'USDT' })).json.refund_id);
      expect((await h.transfers('USDT', shop.hotWallet, s.payer)).map((m) => m.amount)).toEqual([5_000_000n]);
      expect(done).toMatchObject({ status: 'completed', amount: 500, amount_delivered: 500 });
    } finally {
      await asIssuer(h.tokens.USDT, 'setParams(uint256 newBasisPoints, uint256 newMaxFee)', 0n, 0n);
    }
  });

  it('a paused token and a blacklisted destination fail with different reasons (issue 13 item 20)', async () => {
    const s1 = await h.paidSession(shop, { amount: '1.00', token: 'USDT' });
    await asIssuer(h.tokens.USDT, 'pause()');
    let paused: Record<string, any>;
    try {
      paused = await h.settled(shop, (await h.createRefund(shop, { session_id: s1.id, amount: 100, currency: 'USDT' })).json.refund_id);
    } finally {
      await asIssuer(h.tokens.USDT, 'unpause()');
    }
    expect(paused.status).toBe('failed');
    expect(paused.failure_reason).toMatch(/token is paused by its issuer/);
    const s2 = await h.paidSession(shop, { amount: '1.00', token: 'USDC' });
    await asIssuer(h.tokens.USDC, 'blacklist(address who)', tronEvm(s2.payer));
    const blacklisted = await h.settled(
      shop,
      (await h.createRefund(shop, { session_id: s2.id, amount: 100, currency: 'USDC' })).json.refund_id,
    );
    expect(blacklisted.status).toBe('failed');
    expect(blacklisted.failure_reason).toMatch(/destination address is blacklisted by the token issuer/);
    expect(await h.transfers('USDT', shop.hotWallet, s1.payer)).toEqual([]);
    expect(await h.transfers('USDC', shop.hotWallet, s2.payer)).toEqual([]);
  });

  it('fails with a clear reason when the hot wallet holds no tokens, paying nothing', async () => {
    const broke = await h.newMerchant('Broke');
    await h.fundHotWallet(broke, { usdt: 0n, usdc: 0n });
    const s = await h.paidSession(broke, { amount: '2.00', token: 'USDT' });
    const done = await h.settled(broke, (await h.createRefund(broke, { session_id: s.id, amount: 200, currency: 'USDT' })).json.refund_id);
    expect(done.status).toBe('failed');
    expect(done.failure_reason).toMatch(/does not hold enough of the token/);
    expect(done.failure_reason).toContain(tronBase58(broke.hotWallet)); // base58 in the reason too
    expect(done.transaction_hash).toBeNull();
    expect(await h.transfers('USDT', broke.hotWallet, s.payer)).toEqual([]);
    expect((await h.refundEvents(done.id)).map((e) => e.type)).toEqual(['refund.failed']);
  });

  it('fails with OUT_OF_ENERGY forced by the node, from the solidified receipt, paying nothing', async () => {
    const m = await h.newMerchant('Energyless');
    await h.fundHotWallet(m);
    const s = await h.paidSession(m, { amount: '2.00', token: 'USDT' });
    h.fake.forceNextResult('OUT_OF_ENERGY');
    const done = await h.settled(m, (await h.createRefund(m, { session_id: s.id, amount: 200, currency: 'USDT' })).json.refund_id);
    expect(done.status).toBe('failed');
    expect(done.failure_reason).toMatch(/ran out of energy/);
    expect(done.failure_reason).toMatch(/OUT_OF_ENERGY/);
    const attempts = await h.t.db.selectFrom('payout_attempts').select(['state', 'tx_hash']).where('refund_id', '=', done.id).execute();
    expect(attempts).toHaveLength(1);
    // The mined, failed transaction keeps its hash in transaction_hash (issue 16 item 5).
    expect(done.transaction_hash).toBe(attempts[0]!.tx_hash);
    expect(h.fake.chain.txs.get(attempts[0]!.tx_hash)?.contractRet).toBe('OUT_OF_ENERGY');
    expect(await h.transfers('USDT', m.hotWallet, s.payer)).toEqual([]);
    expect((await h.refundEvents(done.id)).map((e) => e.type)).toEqual(['refund.failed']);
  });
});

describe('TRON refunds, worker crashes in a child process', () => {
  let h: TronServiceHarness;
  let shop: ChainHarnessMerchant;
  beforeAll(async () => {
    // In-process: API and watcher only. Refunds are paid by child workers (src/main.ts, ROLES=worker).
    h = await startTronServiceHarness({ extraEnv: { ROLES: 'api,watcher', PAYOUT_LOCK_MS: '1500', PAYOUT_SWEEP_INTERVAL_MS: '1000' } });
    shop = await h.newMerchant('Crashy Tron');
    await h.fundHotWallet(shop);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('a worker killed after signing: the survivor broadcasts the same bytes, exactly one transfer lands', async () => {
    const s = await h.paidSession(shop, { amount: '4.00', token: 'USDT' });
    const created = await h.createRefund(shop, { session_id: s.id, refund_id: 'tron-crash-after-sign', amount: 400, currency: 'USDT' });
    expect(created.status).toBe(201);
    const doomed = h.runWorker('outbound:after_sign');
    expect((await doomed.exited).signal).toBe('SIGKILL');
    const mid = await h.t.db
      .selectFrom('refunds')
      .select(['status', 'signed_at'])
      .where('id', '=', created.json.id)
      .executeTakeFirstOrThrow();
    expect(mid.status).toBe('processing');
    expect(mid.signed_at).not.toBeNull();
    const atDeath = await h.t.db
      .selectFrom('payout_attempts')
      .select(['state', 'tx_hash'])
      .where('refund_id', '=', created.json.id)
      .execute();
    expect(atDeath).toHaveLength(1);
    expect(atDeath[0]!.state).toBe('signed');
    expect(h.fake.chain.txs.has(atDeath[0]!.tx_hash)).toBe(false); // never broadcast
    expect(await h.transfers('USDT', shop.hotWallet, s.payer)).toEqual([]);

    const survivor = h.runWorker();
    try {
      const done = await h.settled(shop, created.json.refund_id);
      expect(done.status).toBe('completed');
      expect(done.transaction_hash).toBe(atDeath[0]!.tx_hash); // the stored bytes, never re-signed
      expect((await h.transfers('USDT', shop.hotWallet, s.payer)).map((m) => m.amount)).toEqual([4_000_000n]);
      expect((await h.refundEvents(created.json.id)).map((e) => e.type)).toEqual(['refund.succeeded']);
    } finally {
      survivor.kill();
      await survivor.exited;
    }
  }, 240_000);

  it('the transaction expires between sign and broadcast: dropped only once proven expired and absent, re-signed once, one transfer', async () => {
    const s = await h.paidSession(shop, { amount: '3.00', token: 'USDT' });
    const created = await h.createRefund(shop, { session_id: s.id, refund_id: 'tron-crash-expired', amount: 300, currency: 'USDT' });
    const doomed = h.runWorker('outbound:after_sign');
    expect((await doomed.exited).signal).toBe('SIGKILL');
    const [first] = await h.t.db
      .selectFrom('payout_attempts')
      .select(['state', 'tx_hash', 'signed'])
      .where('refund_id', '=', created.json.id)
      .execute();
    expect(first!.state).toBe('signed');
    const signed = first!.signed as unknown as { validUntilTimeMs: string };
    expect(await h.adapter.isExpired(first!.signed as never)).toBe(false); // still able to land
    // The chain's clock passes the expiration (and the 3 s margin) in solidified blocks.
    await h.node.rpc('evm_increaseTime', [70]);
    await h.node.mine(5);
    const solid = await h.until(async () => (await h.adapter.isExpired(first!.signed as never)) || undefined, 10_000);
    expect(solid).toBe(true);
    expect(h.fake.chain.txs.has(first!.tx_hash)).toBe(false);
    const survivor = h.runWorker();
    try {
      const done = await h.settled(shop, created.json.refund_id);
      expect(done.status).toBe('completed');
      expect(done.transaction_hash).not.toBe(first!.tx_hash);
      const attempts = await h.t.db
        .selectFrom('payout_attempts')
        .select(['state', 'tx_hash', 'detail', 'signed'])
        .where('refund_id', '=', created.json.id)
        .orderBy('id')
        .execute();
      expect(attempts.map((a) => a.state)).toEqual(['dropped', 'confirmed']);
      expect(attempts[0]!.detail).toMatch(/expired/);
      expect(BigInt((attempts[1]!.signed as unknown as { validUntilTimeMs: string }).validUntilTimeMs)).toBeGreaterThan(
        BigInt(signed.validUntilTimeMs),
      );
      expect(h.fake.chain.txs.has(first!.tx_hash)).toBe(false); // the expired bytes never reached the chain
      expect((await h.transfers('USDT', shop.hotWallet, s.payer)).map((m) => m.amount)).toEqual([3_000_000n]);
      expect((await h.refundEvents(created.json.id)).map((e) => e.type)).toEqual(['refund.succeeded']);
    } finally {
      survivor.kill();
      await survivor.exited;
    }
  }, 240_000);
});
