import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transaction } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import type { InvariantContext, ReceivedDelivery } from '../../scripts/sim/contract.js';
import { CANCELED_SESSIONS, canceledSessionMoneyUnmatched } from '../../scripts/sim/invariants/canceled-sessions.js';
import { CHARGES, renewalPeriodChargedOnce } from '../../scripts/sim/invariants/charges.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { fund, payFrom, walletAt } from '../support/evm-tokens/scenario.js';
import { rolledBack, simContext, simDeliveries, subjects } from '../support/sim-invariant-harness.js';

// The simulator's invariants for canceled sessions and subscription charges (scripts/sim/invariants/canceled-sessions.ts,
// charges.ts) over a REAL state: the whole service on Anvil, a session canceled through the API and then paid in full
// anyway (the watcher keeps that transfer as an unmatched deposit), its payment.cancelled delivered to a real receiver,
// and a subscription created through the API. Both invariants hold on it; each corruption (in a transaction that is
// rolled back, or on a copy of the deliveries) is reported with the right subject.

let h: ServiceHarness;
let receiver: WebhookReceiver;
let m: HarnessMerchant;
let canceled: { id: string; hash: string };
let subscriptionId: string;
let miner: NodeJS.Timeout;

const deliveries = (): ReceivedDelivery[] => simDeliveries(receiver);
const context = (over: Partial<InvariantContext> = {}): InvariantContext => simContext(h, receiver, over);
const corrupted = <T>(f: (trx: Transaction<Database>) => Promise<T>): Promise<T> => rolledBack(h.t.db, f);

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  h = await startServiceHarness();
  m = await h.newMerchant('Sim invariants extras', receiver.url);
  receiver.secrets.push(m.webhookSecret);
  miner = setInterval(() => void h.node.mine(1).catch(() => {}), 300);

  const created = await m.client.post('/api/v1/checkout/sessions/create', { amount: '4.00', currency: 'USD', order_id: 'o-canceled' });
  const sel = await fetch(`${h.base}/checkout/sessions/${created.json.id}/select`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ network: 'ethereum', token: 'USDC' }),
  });
  const { deposit_address } = (await sel.json()) as { deposit_address: string };
  const cancel = await m.client.post(`/api/v1/checkout/sessions/${created.json.id}/cancel`, {});
  expect(cancel.json.status).toBe('canceled');
  await new Promise((r) => setTimeout(r, 1100)); // the paying block is timestamped after the cancel
  const payer = walletAt(32, h.node.provider);
  await h.node.rpc('anvil_setBalance', [payer.address, '0xde0b6b3a7640000']);
  await fund(h.tokens.USDC, payer.address, 4_000_000n);
  const hash = await payFrom(payer, h.tokens.USDC, deposit_address, 4_000_000n);
  canceled = { id: created.json.id as string, hash };
  await h.until(async () => {
    const d = await h.t.db
      .selectFrom('deposits')
      .select(['status', 'disposition'])
      .where('session_id', '=', canceled.id)
      .executeTakeFirst();
    return d?.status === 'confirmed' && d.disposition === 'unmatched' ? true : undefined;
  }, 60_000);
  await receiver.waitFor(() => receiver.received.some((r) => r.eventType === 'payment.cancelled' && r.answeredWith === 200), 60_000);

  const sub = await m.client.post('/api/v1/subscriptions/create', {
    items: [{ price_data: { price_id: 'p', currency: 'USD', product: 'Plan', unit_amount: 500, recurring: { interval: 'month' } } }],
    customer: 'cus-sim',
  });
  expect(sub.status).toBe(200);
  subscriptionId = sub.json.id as string;
}, 300_000);

afterAll(async () => {
  clearInterval(miner);
  await h?.close();
  await receiver?.close();
});

describe('canceled sessions and subscription charges (simulator invariants)', () => {
  it('both hold on the real state', async () => {
    expect(await canceledSessionMoneyUnmatched(context())).toEqual([]);
    expect(await renewalPeriodChargedOnce(context())).toEqual([]);
  });

  it('money to a canceled session credited, or not recorded, and a missing payment.cancelled are reported', async () => {
    const credited = await corrupted(async (trx) => {
      await trx
        .updateTable('deposits')
        .set({ disposition: 'credited', unmatched_reason: null })
        .where('session_id', '=', canceled.id)
        .execute();
      return canceledSessionMoneyUnmatched(context({ db: trx }));
    });
    expect(subjects(credited, CANCELED_SESSIONS)).toEqual([canceled.id]);
    expect(credited[0]!.message).toContain('not a confirmed unmatched deposit');

    const lost = await corrupted(async (trx) => {
      await trx.deleteFrom('deposits').where('session_id', '=', canceled.id).execute();
      return canceledSessionMoneyUnmatched(context({ db: trx }));
    });
    expect(lost.map((v) => v.message).join()).toContain('is not recorded as a deposit');

    const silent = await canceledSessionMoneyUnmatched(context({ deliveries: deliveries().filter((d) => d.type !== 'payment.cancelled') }));
    expect(subjects(silent, CANCELED_SESSIONS)).toEqual([canceled.id]);
    expect(silent[0]!.message).toContain('payment.cancelled never reached');
  });

  it('a paid invoice nothing paid for, and an active subscription whose latest invoice is not paid, are reported', async () => {
    const vs = await corrupted(async (trx) => {
      const sub = await trx.selectFrom('subscriptions').selectAll().where('id', '=', subscriptionId).executeTakeFirstOrThrow();
      const invoice = (id: string, status: 'paid' | 'open') => ({
        id,
        merchant_id: sub.merchant_id,
        mode: sub.mode,
        subscription_id: sub.id,
        customer: sub.customer,
        period_number: 1,
        amount_due_minor: 500n,
        amount_paid_minor: status === 'paid' ? 500n : 0n,
        currency: 'USD',
        status,
        billing_reason: 'subscription_create',
        period_start: new Date(),
        period_end: new Date(),
        due_date: new Date(),
        metadata: '{}',
        created_at: new Date(),
      });
      await trx.insertInto('invoices').values(invoice('in_simpaid', 'paid')).execute();
      await trx.updateTable('subscriptions').set({ status: 'active', latest_invoice_id: null }).where('id', '=', subscriptionId).execute();
      return renewalPeriodChargedOnce(context({ db: trx }));
    });
    const messages = vs.filter((v) => v.invariant === CHARGES).map((v) => v.message);
    expect(messages.some((x) => x.includes('in_simpaid') && x.includes('no charge of it moved money'))).toBe(true);
    expect(messages.some((x) => x.includes('in_simpaid') && x.includes('invoice.paid never reached'))).toBe(true);
    expect(subjects(vs, CHARGES)).toContain(subscriptionId);
  });
});
