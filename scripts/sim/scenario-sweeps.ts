import { isSweeper, OPERATOR_SLOT, type ChainAdapter, type KeyDeriver, type Wallet } from '../../chains/types.js';
import type { NetworkId } from '../../chains/vocabulary.js';
import type { Db } from '../../src/db/database.js';
import { registerWallets } from '../../src/ledger/journal/entries.js';
import { setSweepPolicy } from '../../src/ledger/treasury/destinations.js';
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

/** TRON's resources account: nothing staked (every address swept with the TRX top-up), too little stake for a busy
 * sweep (delegation first, the rest by top-up: `skipped` with the reason), or plenty (delegation only). */
export type TronEnergy = 'none' | 'short' | 'ample';

export interface SweepPlan {
  intervalSeconds: number;
  tronEnergy: TronEnergy;
  /** The operator's `sweep run` beside the worker (second-driver.ts): first started `at` ms from t0, run `runs` times
   * back to back (each drives whatever is running then); null: not in this seed. */
  secondDriver: { at: number; runs: number } | null;
}

/** Units of the EVM gas station's top-up per seed (wei), acknowledged by the runner as gas it funded. */
export const GAS_STATION_TOPUP = 10n * 10n ** 18n;
/** Lamports of the Solana gas station's top-up per seed (the fee payer of every sweep batch). */
export const SOLANA_GAS_STATION_TOPUP = 5n * 10n ** 9n;
/** Sun of the TRON gas station's top-up per seed (activation and the TRX top-ups: ~1 TRX + ~6.5 TRX per address). */
export const TRON_GAS_STATION_TOPUP = 5_000n * 1_000_000n;
/** TRX (sun) the TRON resources account stakes for energy (~10 energy a day per TRX on the fake's network totals; a
 * USDT transfer needs ~30–65k). */
/** Liquid TRX (sun) the TRON resources account keeps beside its stake, for the bandwidth its (un)delegations burn
 * (~0.3 TRX each once the 600 free bytes a day are used). */
export const TRON_RESOURCES_LIQUID = 50n * 1_000_000n;
const TRON_STAKE: Record<TronEnergy, bigint> = { none: 0n, short: 8_000n * 1_000_000n, ample: 500_000n * 1_000_000n };

export function buildSweepPlan(prng: Prng, o: { activeMs: number }): SweepPlan {
  // Drawn in this order, so what a seed drew before each later draw existed stays as it was.
  const intervalSeconds = prng.pick([2, 3, 5]);
  const tronEnergy = prng.pick(['none', 'short', 'ample'] as const);
  // Two seeds in three: the CLI's `sweep run` as a second driver, from somewhere in the active phase, 1–3 times.
  const secondDriver = prng.int(0, 2) > 0 ? { at: prng.int(0, Math.max(0, o.activeMs - 3000)), runs: prng.int(1, 3) } : null;
  return { intervalSeconds, tronEnergy, secondDriver };
}

export interface SweepRun {
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startSweeps(plan: SweepPlan): Promise<SweepRun> {
  const rates = (usd: string) => ({ USDT: usd, USDC: usd });
  const ticker: FakeTicker = await startFakeTicker({
    coinbaseRates: { ETH: rates('3000.00'), BNB: rates('600.00'), SOL: rates('150.00'), TRX: rates('0.10') },
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

/** One network's side of a seed's sweeps: how the operator gives its gas station the native coin (after registering
 * it), and, on TRON, stakes energy beforehand. */
export interface SweepNetwork {
  network: NetworkId;
  adapter: ChainAdapter;
  /** The registry's decimals of each token on this network (the policy's minimum is 1 token). */
  decimals: Record<'USDT' | 'USDC', number>;
  /** Adds native coin to `address` from outside; returns the base units added (acknowledged by the runner). */
  fundGasStation(address: string): Promise<bigint>;
  /** TRON: stakes `sun` for energy on the resources account, as the operator does once before any sweep. */
  stakeResources?(resources: Wallet, sun: bigint): Promise<void>;
}

/** Per seed and network: the sweep policy of both tokens, the gas station registered and given gas, and on TRON the
 * resources account staked as drawn (before the service ever sees it: its opening balance is what staking left). */
export async function setupSweepNetwork(
  db: Db,
  plan: SweepPlan,
  n: SweepNetwork,
  keys: KeyDeriver,
  nativeFunded: Map<string, bigint>,
): Promise<string | undefined> {
  const { network, adapter } = n;
  if (!isSweeper(adapter)) return undefined;
  for (const token of ['USDT', 'USDC'] as const)
    await setSweepPolicy(db, {
      network,
      mode: 'test',
      token,
      minAmountBase: 10n ** BigInt(n.decimals[token]),
      maxFeeBps: 5000,
      actor: 'simulator',
    });
  if (n.stakeResources && TRON_STAKE[plan.tronEnergy] > 0n)
    await n.stakeResources(await adapter.deriveOperatorWallet(keys, OPERATOR_SLOT.resources), TRON_STAKE[plan.tronEnergy]);
  const station = adapter.normalizeAddress((await adapter.deriveOperatorWallet(keys, OPERATOR_SLOT.gasStation)).address)!;
  await registerWallets(db, [{ network, mode: 'test', address: station, merchantId: null, role: 'gas_station' }]);
  // The gas station is the same operator wallet in every seed of a run: what earlier seeds left stays, the top-up is
  // added (and acknowledged as exactly that).
  nativeFunded.set(station.toLowerCase(), await n.fundGasStation(station));
  return station;
}

/** The EVM side: `anvil_setBalance` adds GAS_STATION_TOPUP to what the gas station holds. */
export function evmSweepNetwork(e: SimEvm, adapter: ChainAdapter): SweepNetwork {
  return {
    network: e.contract.network,
    adapter,
    decimals: { USDT: e.chain.tokens.USDT.decimals, USDC: e.chain.tokens.USDC.decimals },
    async fundGasStation(station) {
      const before = await e.chain.node.provider.getBalance(station);
      await e.chain.node.provider.send('anvil_setBalance', [station, `0x${(before + GAS_STATION_TOPUP).toString(16)}`]);
      return GAS_STATION_TOPUP;
    },
  };
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
