import { Contract, type Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transfersFrom } from '../support/chain-watch.js';
import { fund, walletAt, type DeployedToken } from '../support/evm-tokens/scenario.js';
import { plan, startSubsFixture, type SubsFixture } from './subscriptions-fixture.js';

// Subscription charges against the token behaviours of the real stablecoins (issue 13, items 18 and 20): Tether's fee
// on transferFrom, a pause, blacklists of the customer (Tether) and of the charger (FiatToken).

let f: SubsFixture;
const T0 = new Date('2027-10-01T00:00:00Z');
const DAY = 86_400_000;
beforeAll(async () => {
  f = await startSubsFixture({ start: T0 });
}, 120_000);
afterAll(async () => f?.close());

type Send = (...args: unknown[]) => Promise<{ wait(): Promise<unknown> }>;

async function asIssuer(token: DeployedToken, signature: string, ...args: unknown[]): Promise<void> {
  const c = new Contract(token.address, [`function ${signature}`], walletAt(0, f.node.provider));
  await (await (c.getFunction(signature.slice(0, signature.indexOf('('))) as Send)(...args)).wait();
}

async function activeDailySub(index: number, token: 'USDT' | 'USDC' = 'USDT'): Promise<{ id: string; customer: Wallet }> {
  const customer = await f.customer(index, token === 'USDT' ? 100_000_000n : 0n);
  if (token === 'USDC') await fund(f.tokens.USDC, customer.address, 100_000_000n);
  const s = await f.create({ ...plan({ recurring: { interval: 'day' } }), customer: `cus_ts_${index}` });
  await f.authorize(s.id, customer, token);
  await f.settle();
  expect((await f.client.get(`/api/v1/subscriptions/${s.id}`)).json.status).toBe('active');
  return { id: s.id, customer };
}

const charges = (subId: string) =>
  f.h.t.db.selectFrom('subscription_charges').selectAll().where('subscription_id', '=', subId).orderBy('id').execute();

const nextDay = async () => {
  f.clock.set(new Date(f.clock.now().getTime() + DAY + 60_000));
  await f.settle();
};

describe('charges and token behaviours', () => {
  it('a renewal on a token taking a fee records what the settlement address received; the invoice is paid by the customer in full', async () => {
    const { id, customer } = await activeDailySub(400);
    const { settlement } = await f.deps.walletResolver.wallets(f.merchantId, 'test', 'ethereum');
    await asIssuer(f.tokens.USDT, 'setParams(uint256 newBasisPoints, uint256 newMaxFee)', 10n, 1_000_000n); // 0.1 %
    try {
      await nextDay();
    } finally {
      await asIssuer(f.tokens.USDT, 'setParams(uint256 newBasisPoints, uint256 newMaxFee)', 0n, 0n);
    }
    const c = await charges(id);
    expect(c.map((x) => x.state)).toEqual(['succeeded', 'succeeded']);
    expect(c.map((x) => x.amount_base)).toEqual([10_000_000n, 10_000_000n]);
    const onChain = await transfersFrom(f.node, f.tokens.USDT.address, customer.address, settlement);
    expect(onChain.map((t) => t.amount)).toEqual([10_000_000n, 9_990_000n]);
    expect(c.map((x) => x.delivered_base)).toEqual([10_000_000n, 9_990_000n]);
    const payment = await f.h.t.db
      .selectFrom('payment_sessions')
      .select(['received_base', 'amount_minor'])
      .where('id', '=', c[1]!.payment_id!)
      .executeTakeFirstOrThrow();
    expect(payment.received_base).toBe(9_990_000n);
    const deposit = await f.h.t.db
      .selectFrom('deposits')
      .select('amount_base')
      .where('session_id', '=', c[1]!.payment_id!)
      .executeTakeFirstOrThrow();
    expect(deposit.amount_base).toBe(9_990_000n);
    const invoice = (await f.client.get(`/api/v1/invoices/${c[1]!.invoice_id}`)).json;
    expect(invoice).toMatchObject({ status: 'paid', amount_due: 1000, amount_paid: 1000, amount_remaining: 0 });
    expect((await f.client.post(`/api/v1/subscriptions/${id}/cancel`, {})).status).toBe(200);
  }, 120_000);

  it('a renewal refused by a paused token, a blacklisted customer or a blacklisted charger fails naming which', async () => {
    const a = await activeDailySub(401);
    const b = await activeDailySub(402);
    const c = await activeDailySub(403, 'USDC');
    const { charger } = await f.deps.walletResolver.wallets(f.merchantId, 'test', 'ethereum');

    await asIssuer(f.tokens.USDT, 'pause()');
    try {
      await nextDay();
    } finally {
      await asIssuer(f.tokens.USDT, 'unpause()');
    }
    for (const s of [a, b]) {
      const [, renewal] = await charges(s.id);
      expect(renewal!.state).toBe('failed');
      expect(renewal!.failure_reason).toMatch(/^token_paused: the token contract is paused by its issuer/);
    }
    expect((await charges(c.id)).map((x) => x.state)).toEqual(['succeeded', 'succeeded']); // USDC was not paused

    await asIssuer(f.tokens.USDT, 'addBlackList(address who)', b.customer.address);
    await asIssuer(f.tokens.USDC, 'blacklist(address who)', charger);
    try {
      await nextDay(); // a and b retry (first failure + 1 day); c renews
    } finally {
      await asIssuer(f.tokens.USDT, 'removeBlackList(address who)', b.customer.address);
      await asIssuer(f.tokens.USDC, 'unBlacklist(address who)', charger);
    }
    // a's retry succeeds (and, its next period already due, is followed by that period's renewal).
    expect((await charges(a.id)).map((x) => x.state).slice(0, 3)).toEqual(['succeeded', 'failed', 'succeeded']);
    const bRetry = (await charges(b.id))[2]!;
    expect(bRetry.state).toBe('failed');
    expect(bRetry.failure_reason).toMatch(/^sender_blacklisted: the customer's address is blacklisted by the token issuer/);
    const cRenewal = (await charges(c.id))[2]!;
    expect(cRenewal.state).toBe('failed');
    expect(cRenewal.failure_reason).toMatch(/^spender_blacklisted: the charger address is blacklisted by the token issuer/);
    for (const s of [a, b, c]) expect((await f.client.post(`/api/v1/subscriptions/${s.id}/cancel`, {})).status).toBe(200);
  }, 180_000);
});
