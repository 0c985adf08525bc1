import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listSweeps } from '../../src/ledger/treasury/sweeps.js';
import { backgroundMiner } from '../support/chain-watch.js';
import { startFakeTicker, type FakeTicker } from '../support/fake-ticker.js';
import { startServiceHarness, type ServiceHarness } from '../support/service-harness.js';
import { ETH_PRICES, confirmedDeposits, depositAddressOf, gasStation, permissivePolicy, tokenBalance } from '../support/sweep-service.js';

// The worker role's sweep schedule: with SWEEP_INTERVAL_SECONDS set, a paid session's deposit is swept to the hot
// wallet without any operator command (src/main.ts starts src/treasury/worker.ts).
let h: ServiceHarness;
let ticker: FakeTicker;
let miner: { stop(): void };

beforeAll(async () => {
  ticker = await startFakeTicker({ coinbaseRates: ETH_PRICES });
  h = await startServiceHarness({
    // A chain without EIP-7702 (pre-Prague): the sweeps here take the gas top-up path.
    anvilArgs: ['--hardfork', 'cancun'],
    extraEnv: {
      ROLES: 'api,watcher,worker',
      SWEEP_INTERVAL_SECONDS: '1',
      SWEEP_TICK_MS: '200',
      NATIVE_PRICE_SOURCES: 'coinbase',
      RATE_COINBASE_BASE_URL: ticker.url,
    },
  });
  await h.node.rpc('anvil_setBalance', [await gasStation(h), '0x56bc75e2d63100000']);
  await permissivePolicy(h);
  miner = backgroundMiner(h.node, 150);
}, 120_000);
afterAll(async () => {
  miner?.stop();
  await h?.close();
  await ticker?.close();
});

describe('the worker role sweeps on its schedule', () => {
  it('sweeps a paid, final deposit to the refunds hot wallet by itself', async () => {
    const shop = await h.newMerchant('Scheduled');
    const s = await h.paidSession(shop, { amount: '6.00' });
    await confirmedDeposits(h, s.id);
    const done = await h.until(async () => {
      const [sweep] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 });
      return sweep?.status === 'completed' ? sweep : undefined;
    }, 90_000);
    expect(done.swept_base).toBe(6_000_000n);
    expect(await tokenBalance(h, 'USDT', shop.hotWallet)).toBe(6_000_000n);
    expect(await tokenBalance(h, 'USDT', await depositAddressOf(h, s.id))).toBe(0n);
    // The next intervals find nothing more to do: still one sweep.
    await new Promise((r) => setTimeout(r, 2500));
    expect(await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 })).toHaveLength(1);
  }, 240_000);
});
