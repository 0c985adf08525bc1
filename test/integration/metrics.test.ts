import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/anvil.js';
import { fund, payFrom, walletAt } from '../support/evm-tokens/scenario.js';
import { scrape } from '../support/metrics-scrape.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

// The service's /metrics (METRICS_PORT, apart from the public API) scraped around a payment, a refund and their
// webhook deliveries on a local chain: the counters and gauges move as the ledger does, and no label carries an id.
let h: ServiceHarness;
let shop: HarnessMerchant;
let receiver: WebhookReceiver;
let port: number;
const chain = { network: 'ethereum', mode: 'test' };
let sessionId = '';
let depositAddress = '';

beforeAll(async () => {
  port = await freePort();
  h = await startServiceHarness({
    extraEnv: { METRICS_PORT: String(port), METRICS_HEAD_INTERVAL_MS: '1000', METRICS_BALANCE_INTERVAL_MS: '5000' },
  });
  receiver = await startWebhookReceiver();
  shop = await h.newMerchant('Metered', receiver.url);
  receiver.secrets.push(shop.webhookSecret);
  await h.node.rpc('anvil_setBalance', [shop.hotWallet, `0x${(10n ** 19n).toString(16)}`]);
  await fund(h.tokens.USDT, shop.hotWallet, 1_000_000_000n);
});

afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

const waitMetric = (f: (s: Awaited<ReturnType<typeof scrape>>) => boolean, ms = 20_000) =>
  h.until(async () => {
    const s = await scrape(port);
    return f(s) ? s : undefined;
  }, ms);

describe('metrics endpoint', () => {
  it('serves /metrics on METRICS_PORT only, not on the public API', async () => {
    expect(h.service.metricsPort).toBe(port);
    expect((await fetch(`${h.base}/metrics`)).status).toBe(404);
    const s = await scrape(port);
    expect(s.text).toContain('# TYPE stablepay_http_requests_total counter');
    expect(s.get('stablepay_queue_jobs', { queue: 'payouts', state: 'waiting' })).toBe(0);
    expect(s.get('stablepay_queue_jobs', { queue: 'webhook-deliveries', state: 'delayed' })).toBe(0);
    expect(s.get('stablepay_outbox_backlog')).toBeGreaterThanOrEqual(0);
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
  });

  it('moves with a payment: provisional deposit, credit, watcher progress, HTTP by route, webhook delivered', async () => {
    const before = await scrape(port);
    const credited0 = before.get('stablepay_deposits_credited_total', chain) ?? 0;
    const create0 =
      before.get('stablepay_http_requests_total', { method: 'POST', route: '/api/v1/checkout/sessions/create', status: '200' }) ?? 0;

    const created = await shop.client.post('/api/v1/checkout/sessions/create', { amount: '10.00', currency: 'USD', order_id: 'metrics-1' });
    expect(created.status).toBe(200);
    sessionId = created.json.id;
    const sel = await fetch(`${h.base}/checkout/sessions/${sessionId}/select`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'ethereum', token: 'USDT' }),
    });
    const selection = (await sel.json()) as { deposit_address: string; amount_due_base: string };
    depositAddress = selection.deposit_address;
    const payer = walletAt(7, h.node.provider);
    await h.node.rpc('anvil_setBalance', [payer.address, '0xde0b6b3a7640000']);
    await fund(h.tokens.USDT, payer.address, 10_000_000n);
    await payFrom(payer, h.tokens.USDT, depositAddress, 10_000_000n);

    // Seen, not yet final (2 confirmations): one provisional deposit, nothing credited.
    const seen = await waitMetric((s) => s.get('stablepay_deposits_provisional', chain) === 1);
    expect(seen.get('stablepay_deposits_credited_total', chain) ?? 0).toBe(credited0);

    await h.node.mine(3);
    await h.until(async () =>
      (await shop.client.get(`/api/v1/checkout/sessions/${sessionId}`)).json.payment_status === 'paid' ? true : undefined,
    );
    await receiver.waitFor(() => receiver.received.some((r) => r.eventType === 'payment.completed'));
    const head = BigInt(await h.node.rpc<string>('eth_blockNumber'));
    const after = await waitMetric(
      (s) =>
        (s.get('stablepay_webhook_deliveries_total', { event_type: 'payment.completed', outcome: 'delivered' }) ?? 0) >= 1 &&
        s.get('stablepay_watcher_processed_height', chain) === Number(head) &&
        s.get('stablepay_chain_head_height', chain) === Number(head),
    );

    expect(after.get('stablepay_deposits_credited_total', chain)).toBe(credited0 + 1);
    expect(after.get('stablepay_deposits_provisional', chain) ?? 0).toBe(0);
    expect(after.get('stablepay_deposits_unmatched_total', chain) ?? 0).toBe(0);
    expect(after.get('stablepay_watcher_lag_blocks', chain)).toBe(0);
    expect(after.get('stablepay_watcher_final_height', chain)).toBe(Number(head) - 1); // 2 confirmations: the head block is the first
    expect(Date.now() / 1000 - after.get('stablepay_watcher_last_commit_timestamp_seconds', chain)!).toBeLessThan(5);
    expect(after.get('stablepay_watcher_block_age_seconds', chain)).toBeGreaterThanOrEqual(0);
    expect(after.get('stablepay_http_requests_total', { method: 'POST', route: '/api/v1/checkout/sessions/create', status: '200' })).toBe(
      create0 + 1,
    );
    expect(
      after.sum('stablepay_http_requests_total', { route: '/api/v1/checkout/sessions/:session_id', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    expect(after.get('stablepay_http_request_duration_seconds_count', { method: 'POST', route: '/api/v1/checkout/sessions/create' })).toBe(
      create0 + 1,
    );
    expect(after.get('stablepay_webhook_delivery_duration_seconds_count', { outcome: 'delivered' })).toBeGreaterThanOrEqual(1);
    expect(after.get('stablepay_outbox_backlog')).toBe(0);
    // Bounded labels: no session id, merchant id or address reaches a series.
    for (const id of [sessionId, shop.id, depositAddress, depositAddress.toLowerCase(), shop.hotWallet.toLowerCase()])
      expect(after.text).not.toContain(id);
  });

  it('moves with a refund: in flight while unconfirmed with its age, then settled, delivered, and the hot wallet balance read', async () => {
    const created = await shop.client.post('/api/v1/refunds/create', {
      refund_id: 'rf-metrics-1',
      session_id: sessionId,
      amount: 250,
      currency: 'USDT',
    });
    expect(created.status).toBe(201);
    // No block is mined: the payout waits for its confirmations, in flight.
    const inFlight = await waitMetric((s) => s.sum('stablepay_refunds_in_flight') === 1);
    expect(inFlight.sum('stablepay_refunds_oldest_in_flight_age_seconds')).toBeGreaterThan(0);

    const done = await h.until(async () => {
      await h.node.mine(1);
      const r = await shop.client.get('/api/v1/refunds/rf-metrics-1');
      return r.json.status === 'completed' ? r.json : undefined;
    }, 45_000);
    expect(done.status).toBe('completed');
    const after = await waitMetric(
      (s) =>
        s.get('stablepay_webhook_deliveries_total', { event_type: 'refund.succeeded', outcome: 'delivered' }) === 1 &&
        s.get('stablepay_hot_wallet_min_balance', { ...chain, slot: 'refunds', asset: 'USDT' }) === 997.5,
      30_000,
    );
    expect(after.sum('stablepay_refunds_in_flight')).toBe(0);
    expect(after.get('stablepay_refunds_oldest_in_flight_age_seconds', { state: 'processing' })).toBe(0);
    expect(after.get('stablepay_hot_wallets_read', { ...chain, slot: 'refunds' })).toBe(1);
    const eth = after.get('stablepay_hot_wallet_min_balance', { ...chain, slot: 'refunds', asset: 'native' })!;
    expect(eth).toBeGreaterThan(9.9);
    expect(eth).toBeLessThan(10); // gas was paid
    expect(after.text).not.toContain(shop.hotWallet.toLowerCase());
  });
});
