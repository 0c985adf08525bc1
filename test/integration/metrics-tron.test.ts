import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOT_WALLET_SLOT } from '../../chains/types.js';
import { freePort } from '../support/anvil.js';
import { testSigner, type ChainHarnessMerchant } from '../support/chain-service-harness.js';
import { scrape } from '../support/metrics-scrape.js';
import { startTronServiceHarness, type TronServiceHarness } from '../support/tron-service-harness.js';

// Hot-wallet gauges on TRON: TRX, tokens, and the energy and bandwidth a refund will spend, read on an interval from
// the fake java-tron wallet API (scripts/devnet/fake-java-tron) exactly as `payouts wallets` shows them.
let h: TronServiceHarness;
let shop: ChainHarnessMerchant;
let port: number;

beforeAll(async () => {
  port = await freePort();
  h = await startTronServiceHarness({ extraEnv: { METRICS_PORT: String(port), METRICS_BALANCE_INTERVAL_MS: '5000' } });
  shop = await h.newMerchant('Tron metered');
  await h.fundHotWallet(shop, { trxSun: 250_000_000n, energy: 200_000n });
  h.fake.chain.setStaked(shop.hotWallet, { bandwidth: 5_000n });
});
afterAll(async () => {
  await h?.close();
});

describe('hot-wallet metrics on TRON', () => {
  it('exports the refund wallet of a merchant that refunds: TRX, USDT, energy and bandwidth as the wallet API reports them', async () => {
    const s = await h.paidSession(shop, { amount: '3.00', token: 'USDT' });
    const created = await h.createRefund(shop, { session_id: s.id, amount: 100, currency: 'USDT' });
    expect(created.status).toBe(201);
    expect((await h.settled(shop, created.json.refund_id)).status).toBe('completed');

    const adapter = h.service.adapters.require('tron', 'test');
    const wallet = await adapter.deriveHotWallet(testSigner, shop.account, HOT_WALLET_SLOT.refunds);
    const l = { network: 'tron', mode: 'test', slot: 'refunds' };
    const seen = await h.until(async () => {
      const r = (await adapter.describeFeeResources!(wallet.address)) as {
        trx_balance_sun: bigint;
        energy: { available: bigint };
        bandwidth: { available: bigint };
      };
      const b = await adapter.getBalances(wallet.address);
      const m = await scrape(port);
      const want = {
        native: Number(r.trx_balance_sun) / 1e6,
        USDT: Number(b.tokens.USDT) / 1e6,
        energy: Number(r.energy.available),
        bandwidth: Number(r.bandwidth.available),
      };
      const got = Object.fromEntries(Object.keys(want).map((asset) => [asset, m.get('stablepay_hot_wallet_min_balance', { ...l, asset })]));
      return JSON.stringify(got) === JSON.stringify(want) ? { got, m } : undefined;
    }, 30_000);
    expect(seen.got.USDT).toBe(999); // 1,000 funded, 1.00 refunded
    expect(seen.got.energy).toBeGreaterThan(0);
    expect(seen.got.energy).toBeLessThan(200_000); // the refund spent some
    expect(seen.got.native).toBeGreaterThan(0);
    expect(seen.m.get('stablepay_hot_wallets_read', l)).toBe(1);
    expect(seen.m.text).not.toContain(shop.hotWallet);
  });
});
