import { LAMPORTS_PER_SOL } from '@solana/web3.js';
import { isSweeper, OPERATOR_SLOT } from '../../chains/types.js';
import { setSweepPolicy } from '../../src/ledger/treasury/destinations.js';
import { signer } from './evm-tokens/scenario.js';
import { startFakeTicker, type FakeTicker } from './fake-ticker.js';
import type { SolanaServiceHarness } from './solana-service-harness.js';
import type { TronServiceHarness } from './tron-service-harness.js';

// What the tests of sweeps on Solana and TRON set up before their first sweep: a fake of Coinbase's ticker pricing the
// native coin, the operator's gas station (derived from the test mnemonic) given the native coin, and a sweep policy
// for one token (1 token minimum, fees up to 50 %).

export interface SweepSetup {
  ticker: FakeTicker;
  /** The gas station's address. */
  station: string;
}

export async function solanaSweepSetup(h: SolanaServiceHarness, o: { token: 'USDT' | 'USDC'; lamports?: bigint }): Promise<SweepSetup> {
  const ticker = await startFakeTicker({ coinbaseRates: { SOL: { USDT: '150', USDC: '150' } } });
  if (!isSweeper(h.adapter)) throw new Error('the Solana adapter is not a Sweeper');
  const station = (await h.adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.gasStation)).address;
  h.rpc.validator.airdrop(station, o.lamports ?? 10n * BigInt(LAMPORTS_PER_SOL));
  await setSweepPolicy(h.t.db, {
    network: 'solana',
    mode: 'test',
    token: o.token,
    minAmountBase: 1_000_000n,
    maxFeeBps: 5000,
    actor: 'test',
  });
  return { ticker, station };
}

export async function tronSweepSetup(h: TronServiceHarness, o: { stationSun: bigint }): Promise<SweepSetup> {
  const ticker = await startFakeTicker({ coinbaseRates: { TRX: { USDT: '0.25', USDC: '0.25' } } });
  if (!isSweeper(h.adapter)) throw new Error('the TRON adapter is not a Sweeper');
  const station = (await h.adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.gasStation)).address;
  h.fake.chain.setTrx(station, o.stationSun);
  await setSweepPolicy(h.t.db, { network: 'tron', mode: 'test', token: 'USDT', minAmountBase: 1_000_000n, maxFeeBps: 5000, actor: 'test' });
  return { ticker, station };
}
