import { isSweeper, OPERATOR_SLOT, type ChainAdapter, type KeyDeriver } from '../../chains/types.js';
import type { Db } from '../../src/db/database.js';
import { registerWallets } from '../../src/ledger/journal.js';
import { setSweepPolicy } from '../../src/ledger/treasury.js';
import { type FakeTicker, startFakeTicker } from '../../test/support/fake-ticker.js';
import type { SimEvm } from './env/evm.js';
import type { Prng } from './prng.js';

// Sweeps in a seed (issue #20; docs/treasury.md): the worker role's own schedule (SWEEP_INTERVAL_SECONDS, drawn from
// the seed's scenario stream) plans and runs sweeps of the paid sessions' deposit addresses into the merchants'
// refunds hot wallets (no treasury address: everything goes to the hot wallet) all through the active phase, so they
// race with the faults: a `failpoint` fault restarts the worker with an outbound failpoint armed, and a sweep step
// (or a charge) reaching it kills the worker there, as a refund does. The policy is set low (1 token minimum, fees up
// to 50 % of the amount) so the seeds' small sessions are swept. Fees are priced from a fake of Coinbase's public
// ticker (test/support/fake-ticker.ts: no exchange runs here); the gas station (the operator wallet that pays sweep
// fees) is registered in the journal and given gas as the hot wallets are, acknowledged the same way.

export interface SweepPlan {
  intervalSeconds: number;
}

/** Units of the gas station's top-up per seed (wei), acknowledged by the runner as gas it funded. */
export const GAS_STATION_TOPUP = 10n * 10n ** 18n;

export function buildSweepPlan(prng: Prng): SweepPlan {
  return { intervalSeconds: prng.pick([2, 3, 5]) };
}

export interface SweepRun {
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startSweeps(plan: SweepPlan): Promise<SweepRun> {
  const ticker: FakeTicker = await startFakeTicker({
    coinbaseRates: { ETH: { USDT: '3000.00', USDC: '3000.00' }, BNB: { USDT: '600.00', USDC: '600.00' } },
  });
  return {
    env: {
      SWEEP_INTERVAL_SECONDS: String(plan.intervalSeconds),
      SWEEP_TICK_MS: '500',
      NATIVE_PRICE_SOURCES: 'coinbase',
      RATE_COINBASE_BASE_URL: ticker.url,
    },
    stop: () => ticker.close(),
  };
}

/** Per seed and network: the sweep policy of both tokens, and the gas station registered and given gas. */
export async function setupSweepNetwork(
  db: Db,
  e: SimEvm,
  adapter: ChainAdapter,
  keys: KeyDeriver,
  nativeFunded: Map<string, bigint>,
): Promise<string | undefined> {
  const network = e.contract.network;
  if (!isSweeper(adapter)) return undefined;
  for (const token of ['USDT', 'USDC'] as const)
    await setSweepPolicy(db, {
      network,
      mode: 'test',
      token,
      minAmountBase: 10n ** BigInt(e.chain.tokens[token].decimals),
      maxFeeBps: 5000,
      actor: 'simulator',
    });
  const station = (await adapter.deriveOperatorWallet(keys, OPERATOR_SLOT.gasStation)).address;
  await registerWallets(db, [{ network, mode: 'test', address: station, merchantId: null, role: 'gas_station' }]);
  // The gas station is the same operator wallet in every seed of a run: what earlier seeds left stays, the top-up is
  // added (and acknowledged as exactly that).
  const before = await e.chain.node.provider.getBalance(station);
  await e.chain.node.provider.send('anvil_setBalance', [station, `0x${(before + GAS_STATION_TOPUP).toString(16)}`]);
  nativeFunded.set(station.toLowerCase(), GAS_STATION_TOPUP);
  return station;
}

/**
 * The drain pauses sweeping as an operator would before judging the books: every policy's minimum raised beyond any
 * balance, so no new sweep is planned (the running ones still finish). Without it the worker's schedule could start a
 * sweep after the drain saw none running, while the invariants read the final state.
 */
export async function pauseSweeps(db: Db): Promise<void> {
  await db
    .updateTable('sweep_policies')
    .set({ min_amount_base: 10n ** 30n, updated_by: 'simulator drain', updated_at: new Date() })
    .execute();
}
