import { normalizeRate, type Rate } from './rate.js';

/** Exponents beyond this are not currencies; the bound keeps 10n ** e cheap. */
const MAX_EXPONENT = 36;

function checkExponent(name: string, e: number): void {
  if (!Number.isSafeInteger(e) || e < 0 || e > MAX_EXPONENT) {
    throw new RangeError(`${name} must be an integer in 0..${MAX_EXPONENT}, got ${String(e)}`);
  }
}

/**
 * Converts an amount in minor units of the source currency into minor units of the target currency:
 *   target = amountMinor / 10^fromExponent × rate, expressed in 10^-toExponent units, rounded UP (ceiling),
 * so the payer never pays less than the merchant's price (decisions.md: rounded up to 2 decimals).
 * Exact: one bigint multiplication and one ceiling division, no intermediate rounding.
 */
export function convertMinor(amountMinor: bigint, fromExponent: number, rate: Rate, toExponent = 2): bigint {
  if (typeof amountMinor !== 'bigint') throw new TypeError('amountMinor must be a bigint');
  if (amountMinor < 0n) throw new RangeError('amountMinor must not be negative');
  checkExponent('fromExponent', fromExponent);
  checkExponent('toExponent', toExponent);
  const r = normalizeRate(rate);
  const numerator = amountMinor * r.digits * 10n ** BigInt(toExponent);
  const denominator = 10n ** BigInt(fromExponent + r.scale);
  return (numerator + denominator - 1n) / denominator;
}
