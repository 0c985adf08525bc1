import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NETWORKS, type NetworkEntry } from '../../chains/registry.js';
import { startFakeTicker, type FakeTicker } from '../support/fake-ticker.js';
import { type RegistryMerchant, type RegistryNetworksHarness, startRegistryNetworksHarness } from '../support/registry-networks-harness.js';
import { nativePriceTable, runNetworkFlow } from '../support/registry-network-flow.js';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';

// The main suite's fast subset of test/e2e/registry-networks.test.ts (slow tier: the four new networks at once): one
// op-stack network through the whole service, the first the registry lists. A session created, paid, refunded (the
// recorded fee equal to the hot wallet's loss, its L1 data fee included) and swept by gas top-up (the Ecotone node has
// no EIP-7702), then reconciled to zero.

const entry = NETWORKS.find((n) => n.family === 'evm' && n.fees.l1 === 'op-stack') as NetworkEntry;

let h: RegistryNetworksHarness;
let receiver: WebhookReceiver;
let ticker: FakeTicker;
let shop: RegistryMerchant;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  ticker = await startFakeTicker({ coinbaseRates: nativePriceTable([entry]) });
  h = await startRegistryNetworksHarness([entry]);
  shop = await h.newMerchant('One op-stack network', receiver.url);
  receiver.secrets.push(shop.webhookSecret);
}, 120_000);
afterAll(async () => {
  await h?.close();
  await receiver?.close();
  await ticker?.close();
});

describe('an op-stack network end to end', () => {
  it('pays, refunds with the L1 fee recorded, sweeps by top-up and reconciles to zero', async () => {
    const o = await runNetworkFlow(h, shop, receiver, ticker, entry);
    expect(o.refundL1Part).toBeGreaterThan(0n);
    expect(o.sweepMethods).toEqual(['evm-gas-topup']);
    expect(o.report.differences).toEqual([]);
  }, 300_000);
});
