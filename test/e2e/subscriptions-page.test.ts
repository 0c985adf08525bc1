import { Contract } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOT_WALLET_SLOT } from '../../chains/types.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';
import { fund, signer, walletAt } from '../support/evm-tokens/scenario.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { ManualClock } from '../../src/domain/clock.js';
import { DAY_MS } from '../../src/domain/subscription-periods.js';
import { launchBrowser } from './checkout-harness.js';
import { injectEip1193 } from './injected-wallets.js';

// The whole service (src/main.ts, all roles) on Anvil, with only the subscription clock injected, and the
// subscription's checkout_url in headless Chromium with an injected EIP-1193 provider that signs with a test key:
// - the page resets the customer's existing Tether allowance to 0, approves the sized allowance, the worker sees the
//   Approval, charges the first invoice, and the page says so;
// - the whole life of one subscription: authorized through the page → active → three renewals → the customer empties
//   the wallet → past_due → the retries on day 1, 3 and 5 fail → canceled (payment_failed); every event is delivered
//   signed, in the order it was written.

const clock = new ManualClock(new Date());
let h: ServiceHarness;
let m: HarnessMerchant;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let miner: NodeJS.Timeout;
let receiver: WebhookReceiver;

beforeAll(async () => {
  h = await startServiceHarness({ extraEnv: { SUBSCRIPTION_TICK_MS: '100', SUBSCRIPTION_RETRY_DAYS: '1,3,5' }, clock });
  receiver = await startWebhookReceiver();
  m = await h.newMerchant('Page shop', receiver.url);
  receiver.secrets.push(m.webhookSecret);
  browser = await launchBrowser('en-US');
  miner = setInterval(() => void h.node.mine(1).catch(() => {}), 250); // confirmations keep coming
}, 120_000);
afterAll(async () => {
  clearInterval(miner);
  await browser?.dispose();
  await h?.close();
  await receiver?.close();
});

describe('authorization page', () => {
  it('approves through an EIP-1193 wallet in Chromium and the subscription becomes active', async () => {
    const adapter = h.service.adapters.get('ethereum', 'test')!;
    const charger = await adapter.deriveHotWallet(signer, m.account, HOT_WALLET_SLOT.charges);
    await h.node.rpc('anvil_setBalance', [charger.address, '0x56bc75e2d63100000']);
    const customer = walletAt(41, h.node.provider);
    await h.node.rpc('anvil_setBalance', [customer.address, '0xde0b6b3a7640000']);
    await fund(h.tokens.USDT, customer.address, 50_000_000n);
    // An allowance already set: Tether refuses a change from non-zero to non-zero, so the page must reset it first.
    const usdt = new Contract(
      h.tokens.USDT.address,
      ['function approve(address spender, uint256 value)', 'function allowance(address,address) view returns (uint256)'],
      customer,
    );
    await (
      await (usdt.getFunction('approve') as (s: string, v: bigint) => Promise<{ wait(): Promise<unknown> }>)(charger.address, 7n)
    ).wait();

    const created = await m.client.post('/api/v1/subscriptions/create', {
      items: [
        {
          price_data: { price_id: 'p', currency: 'USD', product: 'Pro plan', unit_amount: 1500, recurring: { interval: 'month' } },
          quantity: 1,
        },
      ],
      customer: 'cus_page',
      iterations: 3,
    });
    expect(created.status).toBe(200);
    const id = created.json.id as string;
    expect(new URL(created.json.checkout_url).pathname).toBe(`/subscribe/${id}`);

    const page = await browser.newPage();
    const sent = await injectEip1193(page, customer, h.node);
    const res = await page.goto(`${h.base}/subscribe/${id}`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    await expect(page.locator('#sizing').innerText()).resolves.toContain('45.00');
    await page.click('#authorize');
    await page.locator('#app[data-status="active"]').waitFor({ timeout: 45_000 });
    expect(await page.locator('#msg').innerText()).toContain('active');

    expect(sent.length).toBe(2);
    expect(BigInt(`0x${sent[0]!.slice(-64)}`)).toBe(0n); // reset first
    expect(BigInt(`0x${sent[1]!.slice(-64)}`)).toBe(45_000_000n); // $15 × 3 iterations, 6 decimals
    const s = (await m.client.get(`/api/v1/subscriptions/${id}?expand=latest_invoice`)).json;
    expect(s).toMatchObject({ status: 'active', latest_invoice_object: { status: 'paid', amount_paid: 1500 } });
    const allowance = await (usdt.getFunction('allowance') as (a: string, b: string) => Promise<bigint>)(customer.address, charger.address);
    expect(allowance).toBe(45_000_000n - 15_000_000n);
    await page.close();

    // Every event written in life-cycle order (outbox seq) and delivered signed (arrival order: the whole-life test).
    const outbox = await h.t.db.selectFrom('outbox_events').select(['id', 'type']).where('aggregate_id', '=', id).orderBy('seq').execute();
    expect(outbox.map((e) => e.type)).toEqual([
      'subscription.created',
      'subscription.updated',
      'invoice.created',
      'invoice.paid',
      'subscription.active',
    ]);
    const mine = () => receiver.received.filter((r) => (JSON.parse(r.body) as any).data.object.subscription_id === id);
    await receiver.waitFor(() => mine().length >= 5, 30_000);
    const got = mine();
    expect(got.every((r) => r.problems.length === 0 && r.matchedSecret === 0)).toBe(true);
    expect(new Set(got.map((r) => r.eventId))).toEqual(new Set(outbox.map((e) => e.id)));
    const paid = got.find((r) => r.eventType === 'invoice.paid')!;
    expect(JSON.parse(paid.body).data.object).toMatchObject({
      subscription_id: id,
      customer_id: 'cus_page',
      status: 'paid',
      payment_status: 'paid',
      amount_paid: 1500,
      amount_remaining: 0,
    });
  }, 90_000);
});

describe('a subscription from authorization to cancellation for non-payment', () => {
  it('page → active → three renewals → empty wallet → past_due → three failed retries → canceled; events in order', async () => {
    // A merchant of its own: its charger's nonce is counted below, untouched by the other test's renewals.
    const m = await h.newMerchant('Whole life shop', receiver.url);
    receiver.secrets.push(m.webhookSecret);
    const adapter = h.service.adapters.get('ethereum', 'test')!;
    const charger = await adapter.deriveHotWallet(signer, m.account, HOT_WALLET_SLOT.charges);
    await h.node.rpc('anvil_setBalance', [charger.address, '0x56bc75e2d63100000']);
    const customer = walletAt(71, h.node.provider);
    await h.node.rpc('anvil_setBalance', [customer.address, '0xde0b6b3a7640000']);
    await fund(h.tokens.USDT, customer.address, 45_000_000n); // four periods and a half
    const usdt = new Contract(
      h.tokens.USDT.address,
      ['function transfer(address to, uint256 value)', 'function balanceOf(address) view returns (uint256)'],
      customer,
    );

    const created = await m.client.post('/api/v1/subscriptions/create', {
      items: [
        {
          price_data: { price_id: 'p', currency: 'USD', product: 'Monthly', unit_amount: 1000, recurring: { interval: 'month' } },
          quantity: 1,
        },
      ],
      customer: 'cus_whole_life',
    });
    expect(created.status).toBe(200);
    const id = created.json.id as string;
    const get = async () => (await m.client.get(`/api/v1/subscriptions/${id}?expand=latest_invoice`)).json;

    const page = await browser.newPage();
    const sent = await injectEip1193(page, customer, h.node);
    await page.goto(`${h.base}/subscribe/${id}`);
    await page.click('#authorize');
    await page.locator('#app[data-status="active"]').waitFor({ timeout: 45_000 });
    await page.close();
    expect(sent.length).toBe(1); // no allowance before: one approve, 10 × 12 periods
    expect(BigInt(`0x${sent[0]!.slice(-64)}`)).toBe(120_000_000n);

    // Three renewals, each at its period end.
    for (let renewal = 1; renewal <= 3; renewal++) {
      const before = await get();
      clock.set(new Date(before.current_period_end * 1000 + 1000));
      const after = await h.until(async () => {
        const s = await get();
        return s.current_period_end > before.current_period_end && s.latest_invoice_object?.status === 'paid' ? s : undefined;
      });
      expect(after.status).toBe('active');
    }
    expect(await (usdt.getFunction('balanceOf') as (a: string) => Promise<bigint>)(customer.address)).toBe(5_000_000n);

    // The customer empties the wallet; the next renewal fails before any gas is spent.
    await (
      await (usdt.getFunction('transfer') as (a: string, v: bigint) => Promise<{ wait(): Promise<unknown> }>)(
        walletAt(72, h.node.provider).address,
        5_000_000n,
      )
    ).wait();
    const chargerNonce = await h.node.provider.getTransactionCount(charger.address);
    const last = await get();
    clock.set(new Date(last.current_period_end * 1000 + 1000));
    const pastDue = await h.until(async () => ((await get()).status === 'past_due' ? get() : undefined));
    const invoiceId = pastDue.latest_invoice as string;
    const invoice = async () => (await m.client.get(`/api/v1/invoices/${invoiceId}`)).json;
    expect(await invoice()).toMatchObject({ status: 'open', payment_status: 'failed', attempt_count: 1 });
    const firstFailure = (
      await h.t.db.selectFrom('invoices').select('first_failed_at').where('id', '=', invoiceId).executeTakeFirstOrThrow()
    ).first_failed_at!;

    // Retries on day 1 and 3 fail (still past_due); the one on day 5 fails too: canceled, invoice uncollectible.
    for (const [day, attempts] of [
      [1, 2],
      [3, 3],
    ] as const) {
      clock.set(new Date(firstFailure.getTime() + day * DAY_MS + 1000));
      await h.until(async () => ((await invoice()).attempt_count === attempts ? true : undefined));
      expect((await get()).status).toBe('past_due');
    }
    clock.set(new Date(firstFailure.getTime() + 5 * DAY_MS + 1000));
    const canceled = await h.until(async () => {
      const s = await get();
      return s.status === 'canceled' ? s : undefined;
    });
    expect(canceled).toMatchObject({ status: 'canceled', cancellation_details: { reason: 'payment_failed' } });
    expect(await invoice()).toMatchObject({ status: 'uncollectible', payment_status: 'failed', attempt_count: 4 });
    expect(await h.node.provider.getTransactionCount(charger.address)).toBe(chargerNonce); // no gas on a charge that must fail

    // The life, as written to the outbox (one transaction per change).
    const outbox = await h.t.db.selectFrom('outbox_events').select(['id', 'type']).where('aggregate_id', '=', id).orderBy('seq').execute();
    const paidPeriod = ['invoice.created', 'invoice.paid', 'subscription.active'];
    expect(outbox.map((e) => e.type)).toEqual([
      'subscription.created',
      'subscription.updated',
      ...paidPeriod,
      ...paidPeriod,
      ...paidPeriod,
      ...paidPeriod,
      'invoice.created',
      'invoice.payment_failed',
      'subscription.past_due',
      'invoice.payment_failed',
      'invoice.payment_failed',
      'invoice.payment_failed',
      'subscription.canceled',
    ]);
    // Delivered: every event once, signed, and in the order written (one ordered stream per subscription).
    const mine = () =>
      receiver.received.filter((r) => {
        const o = (JSON.parse(r.body) as { data: { object: { id: string; subscription_id?: string } } }).data.object;
        return o.id === id || o.subscription_id === id;
      });
    await receiver.waitFor(() => new Set(mine().map((r) => r.eventId)).size >= outbox.length, 30_000);
    const got = mine();
    expect(got.every((r) => r.problems.length === 0 && r.matchedSecret === receiver.secrets.indexOf(m.webhookSecret))).toBe(true);
    const firstArrivals = got.map((r) => r.eventId).filter((e, i, all) => all.indexOf(e) === i);
    expect(firstArrivals).toEqual(outbox.map((e) => e.id));
  }, 180_000);
});
