import { PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainHarnessMerchant } from '../support/chain-service-harness.js';
import { startSolanaServiceHarness, type SolanaServiceHarness } from '../support/solana-service-harness.js';

// Refunds on Solana for real: the whole service (src/main.ts) in test mode on the LiteSVM fake, a session paid through
// the public selection endpoint, refunds paid by the generic payout engine from the merchant's hot wallet.
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{64,88}$/;
const isBase58Key = (s: string) => BASE58.test(s) && new PublicKey(s).toBase58() === s;

describe('Solana refunds, service in one process', () => {
  let h: SolanaServiceHarness;
  let shop: ChainHarnessMerchant;
  beforeAll(async () => {
    h = await startSolanaServiceHarness();
    shop = await h.newMerchant('Sol shop');
    h.fundHotWallet(shop);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('takes a payment through the selection endpoint and shows it paid, with base58 addresses', async () => {
    const sel = await h.selectSession(shop, { amount: '2.50', token: 'USDC' });
    expect(isBase58Key(sel.deposit_address)).toBe(true);
    expect(sel.raw.token_contract).toBe(h.mints.USDC);
    expect(sel.amount_due_base).toBe('2500000');
    const s = await h.paidSession(shop, { amount: '2.50', token: 'USDC' });
    const got = await shop.client.get(`/api/v1/checkout/sessions/${s.id}`);
    expect(got.json.payment_status).toBe('paid');
    expect(await h.tokenBalance(h.mints.USDC, s.depositOwner)).toBe(2_500_000n);
  });

  it('creates the deposit token account when the payer picks Solana, paid by the hot wallet (rent included)', async () => {
    const { getAssociatedTokenAddressSync } = await import('@solana/spl-token');
    const lamportsBefore = await h.conn.getBalance(new PublicKey(shop.hotWallet), 'confirmed');
    const sel = await h.selectSession(shop, { amount: '1.00', token: 'USDT' });
    const ata = getAssociatedTokenAddressSync(new PublicKey(h.mints.USDT), new PublicKey(sel.deposit_address), true);
    let info = null;
    for (let i = 0; i < 100 && !info; i++) {
      info = await h.conn.getAccountInfo(ata, 'confirmed');
      if (!info) await new Promise((r) => setTimeout(r, 100));
    }
    expect(info).not.toBeNull();
    const lamportsAfter = await h.conn.getBalance(new PublicKey(shop.hotWallet), 'confirmed');
    expect(lamportsBefore - lamportsAfter).toBeGreaterThanOrEqual(2_039_280); // the ATA's rent came from the hot wallet
  });

  it('pays a refund once from the hot wallet to the payer: signature, receipt, refund.succeeded', async () => {
    const s = await h.paidSession(shop, { amount: '10.00', token: 'USDC' });
    const hotBefore = await h.tokenBalance(h.mints.USDC, shop.hotWallet);
    const created = await h.createRefund(shop, { session_id: s.id, amount: 1000, currency: 'USDC' });
    expect(created.status).toBe(201);
    expect(created.json.destination_address).toBe(s.payer);
    const done = await h.settled(shop, created.json.refund_id);
    expect(done).toMatchObject({ status: 'completed', failure_reason: null, destination_address: s.payer });
    expect(done.transaction_hash).toMatch(SIGNATURE);
    expect(done.receipt_number).toMatch(/^RCPT-\d{8}-\d{6}$/);
    const moved = await h.transfersFrom(h.mints.USDC, shop.hotWallet, s.payer);
    expect(moved).toEqual([{ to: s.payer, amount: 10_000_000n, tx: done.transaction_hash }]);
    expect(await h.tokenBalance(h.mints.USDC, shop.hotWallet)).toBe(hotBefore - 10_000_000n);
    const status = (await h.conn.getSignatureStatuses([done.transaction_hash], { searchTransactionHistory: true })).value[0];
    expect(status?.confirmationStatus).toBe('finalized');
    const events = await h.refundEvents(done.id);
    expect(events.map((e) => e.type)).toEqual(['refund.succeeded']);
    expect((events[0]!.payload as any).data.object).toMatchObject({
      session_id: s.id,
      refund_id: done.refund_id,
      refund_amount: 1000,
      refund_currency: 'USDC',
      status: 'completed',
    });
    const attempts = await h.t.db.selectFrom('payout_attempts').selectAll().where('refund_id', '=', done.id).execute();
    expect(attempts.map((a) => [a.state, a.nonce, a.sender])).toEqual([['confirmed', null, shop.hotWallet]]);
    // Listing answers base58 too.
    const listed = await shop.client.get(`/api/v1/refunds?session_id=${s.id}`);
    expect(JSON.stringify(listed.json)).toContain(s.payer);
  });

  it('pays a partial refund in USDT to an explicit base58 destination without a token account (ATA created)', async () => {
    const s = await h.paidSession(shop, { amount: '3.00', token: 'USDT' });
    const other = new PublicKey(Buffer.alloc(32, 7)).toBase58();
    const created = await h.createRefund(shop, { session_id: s.id, amount: 120, currency: 'USDT', destination_address: other });
    expect(created.status).toBe(201);
    const done = await h.settled(shop, created.json.refund_id);
    expect(done).toMatchObject({ status: 'completed', destination_address: other });
    expect(await h.transfersFrom(h.mints.USDT, shop.hotWallet, other)).toEqual([
      { to: other, amount: 1_200_000n, tx: done.transaction_hash },
    ]);
    expect(await h.transfersFrom(h.mints.USDT, shop.hotWallet, s.payer)).toEqual([]);
  });

  it('a transaction the leader drops is re-sent as the same bytes until its blockhash is proven expired, then re-signed once', async () => {
    const s = await h.paidSession(shop, { amount: '6.00', token: 'USDC' });
    h.rpc.validator.pauseLanding('drop');
    let resumed = false;
    try {
      const created = await h.createRefund(shop, { session_id: s.id, amount: 600, currency: 'USDC' });
      const first = await h.until(async () => {
        const rows = await h.t.db.selectFrom('payout_attempts').selectAll().where('refund_id', '=', created.json.id).execute();
        return rows.length === 1 && rows[0]!.state === 'broadcast' ? rows[0]! : undefined;
      });
      const sendsAtFirst = h.rpc.calls.get('sendTransaction') ?? 0;
      await h.until(async () => ((h.rpc.calls.get('sendTransaction') ?? 0) >= sendsAtFirst + 3 ? true : undefined), 10_000);
      // Re-sent several times, never re-signed: the bytes can still land.
      const meanwhile = await h.t.db
        .selectFrom('payout_attempts')
        .select(['state', 'tx_hash'])
        .where('refund_id', '=', created.json.id)
        .execute();
      expect(meanwhile).toEqual([{ state: 'broadcast', tx_hash: first.tx_hash }]);
      expect(await h.adapter.isExpired(first.signed as never)).toBe(false);
      // One synchronous step of the fake: the leader is back, and every blockhash handed out so far is dead.
      h.rpc.validator.resumeLanding();
      h.rpc.validator.expireBlockhashes();
      resumed = true;
      const done = await h.settled(shop, created.json.refund_id);
      expect(done.status).toBe('completed');
      const attempts = await h.t.db
        .selectFrom('payout_attempts')
        .select(['state', 'tx_hash', 'detail'])
        .where('refund_id', '=', created.json.id)
        .orderBy('id')
        .execute();
      expect(attempts.map((a) => a.state)).toEqual(['dropped', 'confirmed']);
      expect(attempts[0]!.detail).toMatch(/expired/);
      expect(attempts[1]!.tx_hash).toBe(done.transaction_hash);
      expect(await h.transfersFrom(h.mints.USDC, shop.hotWallet, s.payer)).toEqual([
        { to: s.payer, amount: 6_000_000n, tx: done.transaction_hash },
      ]);
      expect((await h.refundEvents(created.json.id)).map((e) => e.type)).toEqual(['refund.succeeded']);
    } finally {
      if (!resumed) h.rpc.validator.resumeLanding();
    }
  });

  it('fails with a clear reason when the hot wallet holds no tokens, paying nothing', async () => {
    const broke = await h.newMerchant('Broke');
    h.fundHotWallet(broke, { usdc: 0n, usdt: 0n });
    const s = await h.paidSession(broke, { amount: '2.00', token: 'USDC' });
    const done = await h.settled(broke, (await h.createRefund(broke, { session_id: s.id, amount: 200, currency: 'USDC' })).json.refund_id);
    expect(done.status).toBe('failed');
    expect(done.failure_reason).toMatch(/does not hold enough of the token/);
    expect(done.failure_reason).toContain(broke.hotWallet); // base58 in the reason too
    expect(done.transaction_hash).toBeNull();
    expect(done.destination_address).toBe(s.payer);
    expect(await h.transfersFrom(h.mints.USDC, broke.hotWallet, s.payer)).toEqual([]);
    expect((await h.refundEvents(done.id)).map((e) => e.type)).toEqual(['refund.failed']);
  });

  it('fails with a clear reason when the hot wallet has no SOL for the fee, paying nothing', async () => {
    const poor = await h.newMerchant('No SOL');
    h.fundHotWallet(poor, { lamports: 0n });
    const s = await h.paidSession(poor, { amount: '2.00', token: 'USDC' });
    const done = await h.settled(poor, (await h.createRefund(poor, { session_id: s.id, amount: 200, currency: 'USDC' })).json.refund_id);
    expect(done.status).toBe('failed');
    expect(done.failure_reason).toMatch(/native coin to pay the network fee/);
    expect(await h.transfersFrom(h.mints.USDC, poor.hotWallet, s.payer)).toEqual([]);
  });
});

describe('Solana refunds, worker crashes in a child process', () => {
  let h: SolanaServiceHarness;
  let shop: ChainHarnessMerchant;
  beforeAll(async () => {
    // In-process: API and watcher only. Refunds are paid by child workers (src/main.ts, ROLES=worker).
    h = await startSolanaServiceHarness({ extraEnv: { ROLES: 'api,watcher', PAYOUT_LOCK_MS: '1500', PAYOUT_SWEEP_INTERVAL_MS: '1000' } });
    shop = await h.newMerchant('Crashy Sol');
    h.fundHotWallet(shop);
  });
  afterAll(async () => {
    await h?.close();
  });

  async function crashAfterSign(refundId: string, internalId: string) {
    const doomed = h.runWorker('outbound:after_sign');
    expect((await doomed.exited).signal).toBe('SIGKILL');
    const mid = await h.t.db.selectFrom('refunds').select(['status', 'signed_at']).where('id', '=', internalId).executeTakeFirstOrThrow();
    expect(mid.status).toBe('processing');
    expect(mid.signed_at).not.toBeNull();
    const attempts = await h.t.db
      .selectFrom('payout_attempts')
      .select(['state', 'tx_hash', 'signed'])
      .where('refund_id', '=', internalId)
      .execute();
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.state).toBe('signed');
    void refundId;
    return attempts[0]!;
  }

  it('a worker killed after signing: the survivor sends the same bytes, exactly one transfer lands', async () => {
    const s = await h.paidSession(shop, { amount: '4.00', token: 'USDC' });
    const created = await h.createRefund(shop, { session_id: s.id, refund_id: 'sol-crash-after-sign', amount: 400, currency: 'USDC' });
    expect(created.status).toBe(201);
    const first = await crashAfterSign(created.json.refund_id, created.json.id);
    expect(await h.transfersFrom(h.mints.USDC, shop.hotWallet, s.payer)).toEqual([]); // never broadcast
    const survivor = h.runWorker();
    try {
      const done = await h.settled(shop, created.json.refund_id);
      expect(done.status).toBe('completed');
      expect(done.transaction_hash).toBe(first.tx_hash); // the stored bytes, never re-signed
      expect(await h.transfersFrom(h.mints.USDC, shop.hotWallet, s.payer)).toEqual([
        { to: s.payer, amount: 4_000_000n, tx: done.transaction_hash },
      ]);
      expect((await h.refundEvents(created.json.id)).map((e) => e.type)).toEqual(['refund.succeeded']);
    } finally {
      survivor.kill();
      await survivor.exited;
    }
  }, 240_000); // two worker processes start tsx: minutes on a loaded machine

  it('the blockhash expires between sign and broadcast: dropped only once proven expired, re-signed once, one transfer', async () => {
    const s = await h.paidSession(shop, { amount: '3.00', token: 'USDC' });
    const created = await h.createRefund(shop, { session_id: s.id, refund_id: 'sol-crash-expired', amount: 300, currency: 'USDC' });
    const first = await crashAfterSign(created.json.refund_id, created.json.id);
    const firstSigned = first.signed as unknown as { validUntilHeight: string };
    // Not yet expired: the adapter refuses to call it dead.
    expect(await h.adapter.isExpired(first.signed as never)).toBe(false);
    h.rpc.validator.expireBlockhashes();
    expect(BigInt(await h.conn.getBlockHeight('finalized'))).toBeGreaterThan(BigInt(firstSigned.validUntilHeight));
    expect(await h.adapter.isExpired(first.signed as never)).toBe(true);
    const survivor = h.runWorker();
    try {
      const done = await h.settled(shop, created.json.refund_id);
      expect(done.status).toBe('completed');
      expect(done.transaction_hash).not.toBe(first.tx_hash);
      const attempts = await h.t.db
        .selectFrom('payout_attempts')
        .select(['state', 'tx_hash', 'detail'])
        .where('refund_id', '=', created.json.id)
        .orderBy('id')
        .execute();
      expect(attempts.map((a) => a.state)).toEqual(['dropped', 'confirmed']);
      expect(attempts[0]!.tx_hash).toBe(first.tx_hash);
      expect(attempts[0]!.detail).toMatch(/expired/);
      expect(attempts[1]!.tx_hash).toBe(done.transaction_hash);
      expect((await h.conn.getSignatureStatuses([first.tx_hash], { searchTransactionHistory: true })).value[0]).toBeNull();
      expect(await h.transfersFrom(h.mints.USDC, shop.hotWallet, s.payer)).toEqual([
        { to: s.payer, amount: 3_000_000n, tx: done.transaction_hash },
      ]);
      expect((await h.refundEvents(created.json.id)).map((e) => e.type)).toEqual(['refund.succeeded']);
    } finally {
      survivor.kill();
      await survivor.exited;
    }
  }, 240_000); // two worker processes start tsx: minutes on a loaded machine
});
