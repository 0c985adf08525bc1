import { Contract } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backgroundMiner, transfersFrom } from '../support/chain-watch.js';
import { fund, walletAt, type DeployedToken } from '../support/evm-tokens/scenario.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';

// Refund payouts against the token behaviours of the real stablecoins (issue 13, items 18 and 20): Tether's fee on
// transfers (`setParams`), a pause (`pause`), blacklists (Tether `addBlackList` on senders, FiatToken `blacklist` on
// both ends). The whole service on Anvil; what arrived is counted from the chain's own Transfer logs.
let h: ServiceHarness;
let shop: HarnessMerchant;
let miner: { stop(): void };
let n = 0;

beforeAll(async () => {
  h = await startServiceHarness();
  shop = await h.newMerchant('Token states');
  await h.node.rpc('anvil_setBalance', [shop.hotWallet, `0x${(10n ** 19n).toString(16)}`]);
  await fund(h.tokens.USDT, shop.hotWallet, 1_000_000_000n);
  await fund(h.tokens.USDC, shop.hotWallet, 1_000_000_000n);
  miner = backgroundMiner(h.node);
}, 120_000);
afterAll(async () => {
  miner?.stop();
  await h?.close();
});

const GWEI = 1_000_000_000n;
type Send = (...args: unknown[]) => Promise<{ wait(): Promise<unknown> }>;

/** An owner-only call on a test token (the deployer, Anvil account 0), mined before it returns. */
async function asIssuer(token: DeployedToken, signature: string, ...args: unknown[]): Promise<void> {
  const c = new Contract(token.address, [`function ${signature}`], walletAt(0, h.node.provider));
  await (await (c.getFunction(signature.slice(0, signature.indexOf('('))) as Send)(...args)).wait();
}

/**
 * With mining held, waits until the refund's transaction is in the mempool, then lets the issuer act first in the
 * same block (a higher tip): what the payout's pre-flight could not see.
 */
async function issuerActsBeforeThePayoutLands(refundInternalId: string, token: DeployedToken, signature: string, ...args: unknown[]) {
  await h.until(async () => {
    const a = await h.t.db.selectFrom('payout_attempts').select('state').where('refund_id', '=', refundInternalId).execute();
    return a.some((x) => x.state === 'broadcast') ? true : undefined;
  }, 20_000);
  const c = new Contract(token.address, [`function ${signature}`], walletAt(0, h.node.provider));
  await (c.getFunction(signature.slice(0, signature.indexOf('('))) as Send)(...args, {
    maxPriorityFeePerGas: 50n * GWEI,
    maxFeePerGas: 500n * GWEI,
  });
  await h.node.rpc('evm_mine', []);
}

async function holdMining<T>(f: () => Promise<T>): Promise<T> {
  miner.stop();
  await h.node.rpc('evm_setAutomine', [false]);
  try {
    return await f();
  } finally {
    await h.node.rpc('evm_setAutomine', [true]);
    miner = backgroundMiner(h.node);
  }
}

const createRefund = (m: HarnessMerchant, body: Record<string, unknown>) =>
  m.client.post('/api/v1/refunds/create', { refund_id: `rt-${Date.now()}-${n++}`, ...body });

async function settled(m: HarnessMerchant, refundId: string) {
  return h.until(async () => {
    const r = await m.client.get(`/api/v1/refunds/${refundId}`);
    return r.json.status === 'completed' || r.json.status === 'failed' ? r.json : undefined;
  }, 45_000);
}

const refundEvents = (refundInternalId: string) =>
  h.t.db.selectFrom('outbox_events').select(['type', 'payload']).where('aggregate_id', '=', refundInternalId).execute();

const deliveredBase = async (refundInternalId: string) =>
  (await h.t.db.selectFrom('refunds').select('delivered_base').where('id', '=', refundInternalId).executeTakeFirstOrThrow()).delivered_base;

describe('fee on transfer (Tether setParams)', () => {
  it('grosses a refund up so the customer receives exactly the refund amount; the fee is paid by the hot wallet', async () => {
    const s = await h.paidSession(shop, { amount: '5.00', token: 'USDT' });
    await asIssuer(h.tokens.USDT, 'setParams(uint256 newBasisPoints, uint256 newMaxFee)', 10n, 1_000_000n); // 0.1 %, at most 1 USDT
    try {
      const created = await createRefund(shop, { session_id: s.id, amount: 500, currency: 'USDT' });
      const done = await settled(shop, created.json.refund_id);
      // The customer's Transfer is the refund amount to the base unit; the issuer's fee is a second Transfer.
      expect(await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet, s.payer)).toEqual([
        { to: s.payer, amount: 5_000_000n, tx: done.transaction_hash },
      ]);
      expect(done).toMatchObject({ status: 'completed', failure_reason: null, amount: 500, amount_delivered: 500 });
      const all = await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet);
      expect(all.filter((t) => t.tx === done.transaction_hash).map((t) => t.amount)).toEqual([5005n, 5_000_000n]); // fee first, as Tether emits it
      expect(await deliveredBase(done.id)).toBe(5_000_000n);
      const events = await refundEvents(done.id);
      expect(events.map((e) => e.type)).toEqual(['refund.succeeded']);
      expect((events[0]!.payload as any).data.object).toMatchObject({ refund_amount: 500, amount_delivered: 500, status: 'completed' });
    } finally {
      await asIssuer(h.tokens.USDT, 'setParams(uint256 newBasisPoints, uint256 newMaxFee)', 0n, 0n);
    }
  });

  it('a fee switched on after the pre-flight: the refund records the 4.995 delivered (amount_delivered 499), never 500', async () => {
    const s = await h.paidSession(shop, { amount: '5.00', token: 'USDT' });
    try {
      const created = await holdMining(async () => {
        const c = await createRefund(shop, { session_id: s.id, amount: 500, currency: 'USDT' });
        await issuerActsBeforeThePayoutLands(
          c.json.id,
          h.tokens.USDT,
          'setParams(uint256 newBasisPoints, uint256 newMaxFee)',
          10n,
          1_000_000n,
        );
        return c;
      });
      const done = await settled(shop, created.json.refund_id);
      const moved = await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet, s.payer);
      expect(moved).toEqual([{ to: s.payer, amount: 4_995_000n, tx: done.transaction_hash }]);
      expect(done).toMatchObject({ status: 'completed', amount: 500, amount_delivered: 499 });
      expect(await deliveredBase(done.id)).toBe(4_995_000n);
      const events = await refundEvents(done.id);
      expect(events.map((e) => e.type)).toEqual(['refund.succeeded']);
      expect((events[0]!.payload as any).data.object).toMatchObject({ refund_amount: 500, amount_delivered: 499 });
    } finally {
      await asIssuer(h.tokens.USDT, 'setParams(uint256 newBasisPoints, uint256 newMaxFee)', 0n, 0n);
    }
  });
});

describe('a success receipt is not enough', () => {
  it('a mined transfer whose tokens went to another address than the refund destination fails the refund, never completes it', async () => {
    const s = await h.paidSession(shop, { amount: '2.00', token: 'USDC' });
    const elsewhere = `0x${'5a'.repeat(20)}`;
    const created = await holdMining(async () => {
      const c = await createRefund(shop, { session_id: s.id, amount: 200, currency: 'USDC', destination_address: elsewhere });
      await h.until(async () => {
        const a = await h.t.db.selectFrom('payout_attempts').select('state').where('refund_id', '=', c.json.id).execute();
        return a.some((x) => x.state === 'broadcast') ? true : undefined;
      }, 20_000);
      // The signed transaction pays `elsewhere`; the refund now names the payer (what a token forwarding the transfer
      // to another address, or a wrong signature, would look like from the refund's side).
      await h.t.db.updateTable('refunds').set({ destination_address: s.payer }).where('id', '=', c.json.id).execute();
      await h.node.rpc('evm_mine', []);
      return c;
    });
    const done = await settled(shop, created.json.refund_id);
    expect((await transfersFrom(h.node, h.tokens.USDC.address, shop.hotWallet, elsewhere)).map((t) => t.amount)).toEqual([2_000_000n]);
    expect(done.status).toBe('failed');
    expect(done.failure_reason).toMatch(/went to another address than the destination.*2000000 base units/);
    expect(done.amount_delivered).toBeNull();
    expect((await refundEvents(done.id)).map((e) => e.type)).toEqual(['refund.failed']);
  });
});

describe('paused token vs blacklisted address', () => {
  it('a paused token, a blacklisted destination and a blacklisted hot wallet fail with three different reasons, paying nothing', async () => {
    const reasons: string[] = [];

    const s1 = await h.paidSession(shop, { amount: '1.00', token: 'USDT' });
    await asIssuer(h.tokens.USDT, 'pause()');
    try {
      const r = await settled(shop, (await createRefund(shop, { session_id: s1.id, amount: 100, currency: 'USDT' })).json.refund_id);
      expect(r.status).toBe('failed');
      expect(r.failure_reason).toMatch(/token is paused by its issuer/);
      expect(r.amount_delivered).toBeNull();
      reasons.push(r.failure_reason);
    } finally {
      await asIssuer(h.tokens.USDT, 'unpause()');
    }

    const s2 = await h.paidSession(shop, { amount: '1.00', token: 'USDC' });
    await asIssuer(h.tokens.USDC, 'blacklist(address who)', s2.payer);
    const r2 = await settled(shop, (await createRefund(shop, { session_id: s2.id, amount: 100, currency: 'USDC' })).json.refund_id);
    expect(r2.status).toBe('failed');
    expect(r2.failure_reason).toMatch(/destination address is blacklisted by the token issuer/);
    reasons.push(r2.failure_reason);

    const s3 = await h.paidSession(shop, { amount: '1.00', token: 'USDT' });
    await asIssuer(h.tokens.USDT, 'addBlackList(address who)', shop.hotWallet);
    try {
      const r3 = await settled(shop, (await createRefund(shop, { session_id: s3.id, amount: 100, currency: 'USDT' })).json.refund_id);
      expect(r3.status).toBe('failed');
      expect(r3.failure_reason).toMatch(/hot wallet is blacklisted by the token issuer/);
      reasons.push(r3.failure_reason);
    } finally {
      await asIssuer(h.tokens.USDT, 'removeBlackList(address who)', shop.hotWallet);
    }

    expect(new Set(reasons.map((x) => x.replace(/ \(.*$/, ''))).size).toBe(3);
    for (const payer of [s1.payer, s3.payer]) expect(await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet, payer)).toEqual([]);
    expect(await transfersFrom(h.node, h.tokens.USDC.address, shop.hotWallet, s2.payer)).toEqual([]);
  });

  it('a token paused while the refund is in flight: the reverted transaction fails the refund as paused', async () => {
    const s = await h.paidSession(shop, { amount: '2.00', token: 'USDT' });
    try {
      const created = await holdMining(async () => {
        const c = await createRefund(shop, { session_id: s.id, amount: 200, currency: 'USDT' });
        await issuerActsBeforeThePayoutLands(c.json.id, h.tokens.USDT, 'pause()');
        return c;
      });
      const done = await settled(shop, created.json.refund_id);
      expect(done.status).toBe('failed');
      expect(done.failure_reason).toMatch(/token is paused by its issuer.*receipt status 0/);
      const attempt = await h.t.db
        .selectFrom('payout_attempts')
        .selectAll()
        .where('refund_id', '=', created.json.id)
        .executeTakeFirstOrThrow();
      const receipt = await h.node.rpc<{ status: string }>('eth_getTransactionReceipt', [attempt.tx_hash]);
      expect(BigInt(receipt.status)).toBe(0n); // it was mined and reverted: the pre-flight had passed
      // The reverted transaction's hash is in transaction_hash, not only inside failure_reason (issue 16 item 5).
      expect(done.transaction_hash).toBe(attempt.tx_hash);
      const failedEvent = (
        await h.t.db.selectFrom('outbox_events').select('payload').where('aggregate_id', '=', created.json.id).execute()
      )[0];
      expect((failedEvent!.payload as any).data.object.transaction_hash).toBe(attempt.tx_hash);
      expect(await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet, s.payer)).toEqual([]);
    } finally {
      await asIssuer(h.tokens.USDT, 'unpause()');
    }
  });
});
