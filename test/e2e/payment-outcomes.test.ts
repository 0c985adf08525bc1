import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fund, payFrom, walletAt } from '../support/evm-tokens/scenario.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

// Issue 13, items 13 and 19, through the whole service (all roles, Anvil as Ethereum, a webhook receiver verifying
// signatures): payment.failed reaches the merchant for the other stablecoin, and a session paid within the merchant's
// tolerance shows its shortfall on the API.
let h: ServiceHarness;
let receiver: WebhookReceiver;
let m: HarnessMerchant;
let n = 0;

beforeAll(async () => {
  h = await startServiceHarness();
  receiver = await startWebhookReceiver();
  m = await h.newMerchant('Outcomes shop', receiver.url);
  receiver.secrets.push(m.webhookSecret);
});

afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

async function openSession(amount: string, token: 'USDT' | 'USDC') {
  const created = await m.client.post('/api/v1/checkout/sessions/create', { amount, currency: 'USD', order_id: `out-${n++}` });
  const sel = await fetch(`${h.base}/checkout/sessions/${created.json.id}/select`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ network: 'ethereum', token }),
  });
  return { id: created.json.id as string, address: ((await sel.json()) as { deposit_address: string }).deposit_address };
}

async function send(token: 'USDT' | 'USDC', to: string, amount: bigint) {
  const payer = walletAt(30 + n, h.node.provider);
  await h.node.rpc('anvil_setBalance', [payer.address, '0xde0b6b3a7640000']);
  await fund(h.tokens[token], payer.address, amount);
  await payFrom(payer, h.tokens[token], to, amount);
  await h.node.mine(3);
}

const get = async (id: string) => (await m.client.get(`/api/v1/checkout/sessions/${id}`)).json as Record<string, unknown>;

describe('payment outcomes through the whole service', () => {
  it('USDC sent to a USDT session: payment.failed delivered signed, the session stays open and is then paid', async () => {
    const s = await openSession('4.00', 'USDT');
    await send('USDC', s.address, 4_000_000n);
    const failed = await h.until(async () => receiver.received.find((r) => r.eventType === 'payment.failed' && r.body.includes(s.id)));
    expect(failed.problems).toEqual([]);
    expect(JSON.parse(failed.body).data.object).toEqual({
      amount: '4.00',
      status: 'failed',
      currency: 'USDC',
      exchange_rate: '1',
      order_id: expect.any(String),
      session_id: s.id,
      source: 'api',
    });
    expect(await get(s.id)).toMatchObject({ payment_status: 'unpaid', status: 'open' });
    await send('USDT', s.address, 4_000_000n);
    await h.until(async () => receiver.received.find((r) => r.eventType === 'payment.completed' && r.body.includes(s.id)));
    expect(await get(s.id)).toMatchObject({ payment_status: 'paid' });
    expect(receiver.received.filter((r) => r.body.includes(s.id)).map((r) => r.eventType)).toEqual(['payment.failed', 'payment.completed']);
  });

  it('a merchant with 1 % tolerance: 9.90 of 10.00 is paid, GET shows shortfall 0.10', async () => {
    await h.t.db.updateTable('merchants').set({ underpayment_tolerance_bps: 100 }).where('id', '=', m.id).execute();
    try {
      const s = await openSession('10.00', 'USDC');
      await send('USDC', s.address, 9_900_000n);
      const paid = await h.until(async () => {
        const r = await get(s.id);
        return r.payment_status === 'paid' ? r : undefined;
      });
      expect(paid).toMatchObject({ shortfall: '0.10', shortfall_base: '100000' });
      const status = (await (await fetch(`${h.base}/pay/${s.id}/status`)).json()) as Record<string, unknown>;
      expect(status).toMatchObject({ state: 'paid', shortfall: '0.10', shortfall_base: '100000' });
    } finally {
      await h.t.db.updateTable('merchants').set({ underpayment_tolerance_bps: 0 }).where('id', '=', m.id).execute();
    }
  });
});
