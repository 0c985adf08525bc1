import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvedSubscription } from '../support/approved-subscription.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

// Refunds in the subscription flow through the whole service (src/main.ts, all roles) on Anvil: a subscription is
// authorized by the customer's approve and charged by the worker; its payment (pay_) is refunded by payment_id and
// paid by the payout worker. The refund object names payment_id (never session_id) in create, GET and list, and the
// delivered refund event is the spec's subscription-flow variant: refund_id is our re_ id, external_refund_id the
// merchant's refund_id, original_currency the currency the payment was billed in.

let h: ServiceHarness;
let m: HarnessMerchant;
let receiver: WebhookReceiver;
let miner: NodeJS.Timeout;

beforeAll(async () => {
  h = await startServiceHarness({ extraEnv: { SUBSCRIPTION_TICK_MS: '100' } });
  receiver = await startWebhookReceiver();
  m = await h.newMerchant('Subscription refunds', receiver.url);
  receiver.secrets.push(m.webhookSecret);
  miner = setInterval(() => void h.node.mine(1).catch(() => {}), 250); // confirmations keep coming
}, 120_000);
afterAll(async () => {
  clearInterval(miner);
  await h?.close();
  await receiver?.close();
});

describe('refund of a subscription payment', () => {
  it('shows payment_id in create, GET and list, and delivers refund.succeeded with refund_id, external_refund_id and original_currency', async () => {
    await h.node.rpc('anvil_setBalance', [m.hotWallet, '0xde0b6b3a7640000']); // gas for the refund payout
    const subId = await approvedSubscription(h, m, { customerIndex: 47, customer: 'cus_refund', product: 'Pro plan' });
    const invoice = await h.until(async () => {
      const s = (await m.client.get(`/api/v1/subscriptions/${subId}?expand=latest_invoice`)).json;
      return s.status === 'active' ? (await m.client.get(`/api/v1/invoices/${s.latest_invoice}`)).json : undefined;
    }, 60_000);
    const paymentId = invoice.payment_id as string;
    expect(paymentId).toMatch(/^pay_/);

    const refund = await m.client.post('/api/v1/refunds/create', {
      payment_id: paymentId,
      refund_id: 'sub-rf-1',
      amount: 500,
      currency: 'USDT',
      reason: 'requested_by_customer',
    });
    expect(refund.status).toBe(201);
    const refs = { payment_id: paymentId, invoice_id: invoice.id, subscription_id: subId, refund_id: 'sub-rf-1', amount: 500 };
    expect(refund.json).toMatchObject({ ...refs, status: 'pending' });
    expect(refund.json).not.toHaveProperty('session_id');

    const done = await h.until(async () => {
      const r = await m.client.get('/api/v1/refunds/sub-rf-1');
      return r.json.status === 'completed' || r.json.status === 'failed' ? r : undefined;
    }, 60_000);
    expect(done.status).toBe(200);
    expect(done.json).toMatchObject({ ...refs, id: refund.json.id, status: 'completed' });
    expect(done.json).not.toHaveProperty('session_id');
    expect((await m.client.get(`/api/v1/refunds/${refund.json.id}`)).json).toMatchObject(refs);

    const list = await m.client.get('/api/v1/refunds?page=1&page_size=10');
    expect(list.status).toBe(200);
    const listed = (list.json.data as Array<Record<string, unknown>>).find((r) => r.refund_id === 'sub-rf-1');
    expect(listed).toMatchObject({ ...refs, status: 'completed' });
    expect(listed).not.toHaveProperty('session_id');

    await receiver.waitFor(() => receiver.received.some((r) => r.eventType === 'refund.succeeded'), 30_000);
    const delivered = receiver.received.filter((r) => r.eventType === 'refund.succeeded');
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.problems).toEqual([]);
    expect(JSON.parse(delivered[0]!.body).data.object).toEqual({
      session_id: paymentId,
      order_id: invoice.id,
      refund_id: refund.json.id,
      external_refund_id: 'sub-rf-1',
      original_currency: 'USD',
      refund_amount: 500,
      amount_delivered: 500,
      refund_currency: 'USDT',
      status: 'completed',
      source: 'api',
    });
  }, 180_000);

  it('keeps the payment-session flow as it was: session_id, and refund_id is the merchant refund_id', async () => {
    await h.node.rpc('anvil_setBalance', [m.hotWallet, '0xde0b6b3a7640000']);
    const paid = await h.paidSession(m, { amount: '4.00' });
    const refund = await m.client.post('/api/v1/refunds/create', {
      session_id: paid.id,
      refund_id: 'cs-rf-1',
      amount: 100,
      currency: 'USDT',
    });
    expect(refund.status).toBe(201);
    expect(refund.json).toMatchObject({ session_id: paid.id, refund_id: 'cs-rf-1' });
    expect(refund.json).not.toHaveProperty('payment_id');
    expect(refund.json).not.toHaveProperty('invoice_id');
    await receiver.waitFor(
      () => receiver.received.some((r) => r.eventType === 'refund.succeeded' && JSON.parse(r.body).data.object.refund_id === 'cs-rf-1'),
      60_000,
    );
    const event = receiver.received.find(
      (r) => r.eventType === 'refund.succeeded' && JSON.parse(r.body).data.object.refund_id === 'cs-rf-1',
    )!;
    const object = JSON.parse(event.body).data.object;
    expect(object).toMatchObject({ session_id: paid.id, refund_id: 'cs-rf-1', refund_amount: 100 });
    expect(object).not.toHaveProperty('external_refund_id');
    expect(object).not.toHaveProperty('original_currency');
    expect((await m.client.get('/api/v1/refunds/cs-rf-1')).json).not.toHaveProperty('payment_id');
  }, 120_000);
});
