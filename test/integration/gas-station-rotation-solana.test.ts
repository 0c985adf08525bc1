import { Keypair, PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSweeper, OPERATOR_SLOT } from '../../chains/types.js';
import { setTreasuryDestination } from '../../src/ledger/treasury/destinations.js';
import { currentGasStationSlot, gasStationRotations } from '../../src/ledger/treasury/gas-station.js';
import { listSweeps } from '../../src/ledger/treasury/sweeps.js';
import { rotateGasStation } from '../../src/operations/gas-station.js';
import { createNativePriceService } from '../../src/rates/native-prices.js';
import { planSweeps } from '../../src/treasury/planner.js';
import { createSweeps, driveSweeps } from '../../src/treasury/runner.js';
import { signer } from '../support/evm-tokens/scenario.js';
import type { FakeTicker } from '../support/fake-ticker.js';
import { startSolanaServiceHarness, type SolanaServiceHarness } from '../support/solana-service-harness.js';
import { solanaSweepSetup } from '../support/sweep-setup.js';

// A gas-station rotation on Solana (docs/treasury.md, "Rotating the gas station"), on the LiteSVM endpoint: the audit
// row and the ledger's current slot (2), the planner's operator wallets and its batches naming the new gas station
// (the fee payer), and a sweep the new gas station pays. Solana has no drain builder yet: the rotation says so and
// creates no drain.

let h: SolanaServiceHarness;
let ticker: FakeTicker;
let station0: string;

beforeAll(async () => {
  h = await startSolanaServiceHarness({ extraEnv: { ROLES: 'api,watcher' } });
  ({ ticker, station: station0 } = await solanaSweepSetup(h, { token: 'USDC' }));
}, 180_000);
afterAll(async () => {
  await ticker?.close();
  await h?.close();
});

describe('rotating the Solana gas station', () => {
  it('plans and pays the next sweep from the new gas station; the rotation is audited', async () => {
    const adapter = h.service.adapters.get('solana', 'test')!;
    if (!isSweeper(adapter)) throw new Error('not a sweeper');
    const prices = createNativePriceService({ sources: ['coinbase'], coinbaseBaseUrl: ticker.url, timeoutMs: 2000, cacheTtlMs: 0 });
    const planner = { db: h.t.db, adapters: h.service.adapters, keys: signer, prices };
    const engine = { db: h.t.db, adapters: h.service.adapters, signer, pollMs: 50, stuckAfterMs: 120_000, feeBumpPercent: 25 };
    const engineSettings = { pollMs: 50, stuckAfterMs: 120_000, feeBumpPercent: 25 };

    const r = await rotateGasStation(
      { db: h.t.db, adapters: h.service.adapters, treasury: { keys: signer, signer, prices: () => prices, engine: engineSettings } },
      { network: 'solana', mode: 'test', actor: 'carol', note: 'drill' },
    );
    const station1 = (await adapter.deriveOperatorWallet(signer, 2)).address;
    expect(station1).not.toBe((await adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.resources)).address);
    expect(r).toMatchObject({
      outcome: 'rotated',
      old: { generation: 0, address: station0 },
      current: { generation: 1, address: station1 },
      drains: [],
      drainSupported: false,
    });
    expect(await currentGasStationSlot(h.t.db, 'solana', 'test')).toEqual({ generation: 1, slot: 2 });
    expect(await gasStationRotations(h.t.db, 'solana', 'test')).toMatchObject([
      { generation: 1, actor: 'carol', note: 'drill', address: station1 },
    ]);
    // Both stations stay watched wallets (reconcile keeps accounting for the old one's lamports).
    const watched = await h.t.db
      .selectFrom('journal_wallets')
      .select('address')
      .where('network', '=', 'solana')
      .where('role', '=', 'gas_station')
      .execute();
    expect(watched.map((w) => w.address).sort()).toEqual([station0, station1].sort());

    h.rpc.validator.airdrop(station1, 5_000_000_000n);
    const shop = await h.newMerchant('Rotated');
    const treasury = Keypair.generate().publicKey.toBase58();
    await setTreasuryDestination(h.t.db, {
      merchantId: shop.id,
      network: 'solana',
      mode: 'test',
      treasuryAddress: treasury,
      actor: 'test',
    });
    const s = await h.paidSession(shop, { amount: '9.00', token: 'USDC' });
    await h.until(async () => {
      const rows = await h.t.db.selectFrom('deposits').select('status').where('session_id', '=', s.id).execute();
      return rows.length > 0 && rows.every((x) => x.status === 'confirmed') ? true : undefined;
    }, 60_000);

    const report = await planSweeps(planner, { merchantId: shop.id });
    expect(report.operatorWallets.find((w) => w.role === 'gas_station')?.address).toBe(station1);
    expect(report.batches).toHaveLength(1);
    expect(report.batches[0]!.request.gasStation.address).toBe(station1);
    expect(report.batches[0]!.plan.steps.every((st) => st.from.address === station1)).toBe(true);

    const station0Before = await h.conn.getBalance(new PublicKey(station0), 'confirmed');
    await createSweeps(h.t.db, report.batches);
    expect(await driveSweeps(engine, { timeoutMs: 30_000 })).toBe(0);
    const [done] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 });
    expect(done).toMatchObject({ status: 'completed', swept_base: 9_000_000n });
    expect(await h.transfersFrom(h.mints.USDC, station1, treasury)).toHaveLength(1);
    // The old gas station paid nothing.
    expect(await h.conn.getBalance(new PublicKey(station0), 'confirmed')).toBe(station0Before);
  }, 55_000);
});
