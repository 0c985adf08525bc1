import type { Db } from '../db/database.js';
import type { Mode, NetworkId, TokenSymbol } from '../../chains/vocabulary.js';
import { sweepPolicyRow } from '../ledger/treasury/destinations.js';
import type { Rate } from '../rates/rate.js';

// When a sweep is worth it (docs/treasury.md, Policy): an address holding less than the minimum waits; a batch whose
// fees, priced in the token, exceed the maximum share of what it moves waits too. Defaults when no sweep_policies row
// exists: 10 tokens minimum, at most 100 bps (1 %) of the amount on fees.

export const DEFAULT_MIN_TOKENS = 10n;
export const DEFAULT_MAX_FEE_BPS = 100;

export interface SweepPolicy {
  minAmountBase: bigint;
  maxFeeBps: number;
  source: 'default' | 'configured';
}

export async function sweepPolicy(db: Db, network: NetworkId, mode: Mode, token: TokenSymbol, tokenDecimals: number): Promise<SweepPolicy> {
  const row = await sweepPolicyRow(db, network, mode, token);
  if (row) return { minAmountBase: row.min_amount_base, maxFeeBps: row.max_fee_bps, source: 'configured' };
  return { minAmountBase: DEFAULT_MIN_TOKENS * 10n ** BigInt(tokenDecimals), maxFeeBps: DEFAULT_MAX_FEE_BPS, source: 'default' };
}

/**
 * A native amount (wei, sun, lamports) in token base units at `price` (tokens per native coin), rounded up: a fee is
 * never priced below what it costs.
 */
export function nativeInTokenBase(nativeBase: bigint, price: Rate, nativeDecimals: number, tokenDecimals: number): bigint {
  const num = nativeBase * price.digits * 10n ** BigInt(tokenDecimals);
  const den = 10n ** BigInt(price.scale) * 10n ** BigInt(nativeDecimals);
  return (num + den - 1n) / den;
}

/** `fee` as a share of `amount`, in basis points, rounded up; 10000+ when nothing moves. */
export function feeShareBps(fee: bigint, amount: bigint): number {
  if (amount <= 0n) return 10_000;
  const bps = (fee * 10_000n + amount - 1n) / amount;
  return bps > 1_000_000n ? 1_000_000 : Number(bps);
}
