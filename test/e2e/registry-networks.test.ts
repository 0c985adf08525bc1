import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NETWORKS, type NetworkEntry } from '../../chains/registry.js';
import { startFakeTicker, type FakeTicker } from '../support/fake-ticker.js';
import { type RegistryMerchant, type RegistryNetworksHarness, startRegistryNetworksHarness } from '../support/registry-networks-harness.js';
import { type NetworkFlowOutcome, nativePriceTable, runNetworkFlow } from '../support/registry-network-flow.js';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';

// Issue 37, "Done when": sessions on the four new networks (Base, Arbitrum One, OP Mainnet, Polygon PoS) created, paid,
// refunded and swept, all at once through ONE service with the four configured (each on Anvil started for its registry
// entry: the L1 data fee charged on the op-stack ones, 4 blocks a second on Arbitrum, plain on Polygon; finality the
// registry's `safe` / `finalized` tag). Each network's flow (test/support/registry-network-flow.ts) runs in parallel
// with the others; then every network reconciles to zero. The sweep method is what the run-time detection picks: the
// op-stack nodes run the Ecotone hardfork (no EIP-7702), so gas top-up; the others run Anvil's Prague, so the 7702
// batch. The fast subset (one op-stack network) runs in the main suite: registry-network-opstack.test.ts.
// Slow tier (vitest.slow.ts): about a minute and a half on two cores.

const NEW_NETWORKS = ['base', 'arbitrum', 'optimism', 'polygon'];
const entries = NETWORKS.filter((n) => NEW_NETWORKS.includes(n.id)) as NetworkEntry[];

let h: RegistryNetworksHarness;
let receiver: WebhookReceiver;
let ticker: FakeTicker;
let shop: RegistryMerchant;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  ticker = await startFakeTicker({ coinbaseRates: nativePriceTable(entries) });
  h = await startRegistryNetworksHarness(entries);
  shop = await h.newMerchant('Four new networks', receiver.url);
  receiver.secrets.push(shop.webhookSecret);
}, 180_000);
afterAll(async () => {
  await h?.close();
  await receiver?.close();
  await ticker?.close();
});

describe('the four new networks end to end', () => {
  it('creates, pays, refunds and sweeps a session on each, and reconciles every one to zero', async () => {
    expect(entries.map((e) => e.id).sort()).toEqual([...NEW_NETWORKS].sort());
    const outcomes = await Promise.all(entries.map((e) => runNetworkFlow(h, shop, receiver, ticker, e)));
    const by = Object.fromEntries(outcomes.map((o) => [o.network, o])) as Record<string, NetworkFlowOutcome>;
    // What the run-time detection picked on each.
    expect(Object.fromEntries(outcomes.map((o) => [o.network, o.sweepMethods]))).toEqual({
      base: ['evm-gas-topup'],
      optimism: ['evm-gas-topup'],
      arbitrum: ['evm-7702-batch'],
      polygon: ['evm-7702-batch'],
    });
    // The L1 data fee is in the recorded refund fee on the op-stack networks only.
    expect(by.base!.refundL1Part).toBeGreaterThan(0n);
    expect(by.optimism!.refundL1Part).toBeGreaterThan(0n);
    expect(by.arbitrum!.refundL1Part).toBe(0n);
    expect(by.polygon!.refundL1Part).toBe(0n);
    for (const o of outcomes) expect(o.report.addresses, o.network).toBeGreaterThan(1);
    // Every webhook the receiver took was signed and shaped as documented.
    expect(receiver.received.filter((r) => r.problems.length > 0)).toEqual([]);
  }, 600_000);
});
