import { tronSweepSetup } from '../support/sweep-setup.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRX } from '../../scripts/devnet/fake-java-tron/chain.js';
import { evmHexToTron } from '../../chains/tron/address.js';
import { isSweeper } from '../../chains/types.js';
import { listSweeps } from '../../src/ledger/treasury/sweeps.js';
import { setTreasuryDestination } from '../../src/ledger/treasury/destinations.js';
import { createNativePriceService } from '../../src/rates/native-prices.js';
import { planSweeps } from '../../src/treasury/planner.js';
import { advanceRunningSweeps, createSweeps, driveSweeps } from '../../src/treasury/runner.js';
import { signer } from '../support/evm-tokens/scenario.js';
import type { FakeTicker } from '../support/fake-ticker.js';
import { startTronServiceHarness, type TronServiceHarness } from '../support/tron-service-harness.js';

// A sweep step whose bytes the node refuses (java-tron's BANDWITH_ERROR: the sender lacks bandwidth) is offered again
// when the outbound engine says (5 s after a refusal, docs/outbound.md), not on every pass of the sweep runner: the
// runner used to re-broadcast the refused bytes and log the refusal at error level on every tick (simulator seed 3's
// log: 250 refusals in 2 minutes at a 0.5 s tick). Once the node takes them, the same sweep completes, each step once.

let h: TronServiceHarness;
let ticker: FakeTicker;

beforeAll(async () => {
  h = await startTronServiceHarness({ extraEnv: { ROLES: 'api,watcher' } });
  ({ ticker } = await tronSweepSetup(h, { stationSun: 1_000n * TRX }));
}, 180_000);
afterAll(async () => {
  await ticker?.close();
  await h?.close();
});

describe('sweep runner pacing', () => {
  it('a refused step is offered again after the engine’s wait, not on every pass; once taken, the sweep completes', async () => {
    const shop = await h.newMerchant('Refused sweep');
    await setTreasuryDestination(h.t.db, {
      merchantId: shop.id,
      network: 'tron',
      mode: 'test',
      treasuryAddress: evmHexToTron('0x00000000000000000000000000000000000d5e02'),
      actor: 'test',
    });
    const s = await h.paidSession(shop, { amount: '6.00' });
    const tron = h.service.adapters.require('tron', 'test');
    if (!isSweeper(tron)) throw new Error('not a Sweeper');
    await h.until(async () => ((await tron.finalTokenBalances('USDT', [s.depositAddress]))[0]! > 0n ? true : undefined), 60_000);
    const prices = createNativePriceService({ sources: ['coinbase'], coinbaseBaseUrl: ticker.url, timeoutMs: 2000, cacheTtlMs: 0 });
    const plan = await planSweeps({ db: h.t.db, adapters: h.service.adapters, keys: signer, prices }, { merchantId: shop.id });
    const [sweep] = await createSweeps(h.t.db, plan.batches);
    expect(sweep).toBeDefined();
    const deps = { db: h.t.db, adapters: h.service.adapters, signer, pollMs: 100, stuckAfterMs: 600_000, feeBumpPercent: 25 };

    // 6 s of passes 100 ms apart while the node refuses every broadcast: a pass each time would offer the bytes ~60
    // times. The engine offers freshly signed bytes, and on the next pass offers them again; after that refusal it
    // waits 5 s: three offers at most.
    h.fake.refuseBroadcasts(true);
    const until = Date.now() + 6_000;
    try {
      while (Date.now() < until) {
        expect(await advanceRunningSweeps(deps)).toBe(1);
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      h.fake.refuseBroadcasts(false);
    }
    expect(h.fake.refused).toBeGreaterThanOrEqual(1);
    expect(h.fake.refused).toBeLessThanOrEqual(3);
    const steps = await h.t.db
      .selectFrom('sweep_steps')
      .select(['id', 'status'])
      .where('sweep_id', '=', sweep!.id)
      .orderBy('seq')
      .execute();
    expect(steps[0]!.status).toBe('processing');
    const attempts = await h.t.db.selectFrom('sweep_step_attempts').select('tx_hash').where('step_id', '=', steps[0]!.id).execute();
    expect(attempts).toHaveLength(1); // the same bytes offered again, never re-signed

    // The node takes them now: the sweep completes, the refused step sent once.
    expect(await driveSweeps(deps, { timeoutMs: 120_000 })).toBe(0);
    const [done] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 });
    expect(done).toMatchObject({ id: sweep!.id, status: 'completed' });
    const again = await h.t.db.selectFrom('sweep_step_attempts').select('tx_hash').where('step_id', '=', steps[0]!.id).execute();
    expect(again.map((a) => a.tx_hash)).toEqual(attempts.map((a) => a.tx_hash));
  }, 240_000);
});
