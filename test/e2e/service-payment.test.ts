import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fund, payFrom, walletAt } from '../support/evm-tokens/scenario.js';
import { startServiceHarness, type ServiceHarness } from '../support/service-harness.js';
import type { SignedClient } from '../support/signed-client.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

// The whole service as main.ts starts it (all roles in one process) against an Anvil node standing in for Ethereum:
// create a session over signed HTTP, select the network as the hosted page does, pay on chain, see it paid.
let h: ServiceHarness;
let shop: SignedClient;
let receiver: WebhookReceiver;

beforeAll(async () => {
  h = await startServiceHarness();
  receiver = await startWebhookReceiver();
  const m = await h.newMerchant('E2E shop', receiver.url);
  receiver.secrets.push(m.webhookSecret);
  shop = m.client;
});

afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

describe('the service, end to end on a local chain', () => {
  it('takes a USD session to paid through selection, an on-chain USDT transfer and confirmations', async () => {
    const created = await shop.post('/api/v1/checkout/sessions/create', { amount: '12.34', currency: 'USD', order_id: 'e2e-1' });
    expect(created.status).toBe(200);
    const session = created.json;

    const sel = await fetch(`${h.base}/checkout/sessions/${session.id}/select`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'ethereum', token: 'USDT' }),
    });
    expect(sel.status).toBe(200);
    const selection = (await sel.json()) as Record<string, string>;
    expect(selection).toMatchObject({ network: 'ethereum', token: 'USDT', amount_due: '12.34', amount_due_base: '12340000' });
    const address = selection.deposit_address!;
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);

    const payer = walletAt(5, h.node.provider);
    await fund(h.tokens.USDT, payer.address, 100_000_000n);
    await payFrom(payer, h.tokens.USDT, address, 12_340_000n);
    // Seen but not yet confirmed: still unpaid.
    await new Promise((r) => setTimeout(r, 800));
    expect((await shop.get(`/api/v1/checkout/sessions/${session.id}`)).json.payment_status).toBe('unpaid');

    await h.node.mine(3);
    const paid = await h.until(async () => {
      const r = await shop.get(`/api/v1/checkout/sessions/${session.id}`);
      return r.json.payment_status === 'paid' ? r.json : undefined;
    });
    expect(paid).toMatchObject({ id: session.id, status: 'paid', amount_total: '12.34' });
    const events = await h.t.db.selectFrom('outbox_events').select(['type', 'payload']).where('aggregate_id', '=', session.id).execute();
    expect(events.map((e) => e.type)).toEqual(['payment.completed']);
    expect((events[0]!.payload as any).data.object).toMatchObject({
      status: 'completed',
      currency: 'USDT',
      session_id: session.id,
      order_id: 'e2e-1',
    });

    // The merchant hears about it: signed, with the outbox's event id and body.
    const delivered = await h.until(async () => receiver.received.find((r) => r.eventType === 'payment.completed'));
    expect(delivered.problems).toEqual([]);
    expect(delivered.eventId).toBe((events[0]!.payload as any).id);
    expect(JSON.parse(delivered.body)).toEqual(events[0]!.payload);
  });
});
