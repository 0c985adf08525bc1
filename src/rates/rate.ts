/**
 * An exchange rate as an exact decimal: value = digits / 10^scale.
 * Invariants of every Rate produced here: digits > 0, scale an integer in 0..MAX_RATE_SCALE, and no trailing zero
 * in digits when scale > 0 (canonical form, so two equal rates are structurally equal).
 */
export interface Rate {
  readonly digits: bigint;
  readonly scale: number;
}

/** Bounds that keep a hostile ticker from making us build enormous bigints. */
const MAX_RATE_SCALE = 60;
const MAX_SIGNIFICANT_TEXT = 80;
const MAX_TEXT_LENGTH = 120;

export const RATE_ONE: Rate = Object.freeze({ digits: 1n, scale: 0 });

// Plain decimal or JSON-number syntax (optional exponent). No sign: a rate is positive.
const DECIMAL_TEXT = /^(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d{1,4}))?$/;

export class InvalidRateError extends Error {
  override readonly name = 'InvalidRateError';
}

/**
 * Parses the raw decimal text of a rate exactly (never through Number): "1.0841", "0.92", "1e-3", "12.50E+2".
 * Throws InvalidRateError for anything else, for zero, and for values beyond the bounds above.
 */
export function parseRate(text: string): Rate {
  if (text.length > MAX_TEXT_LENGTH) throw new InvalidRateError('rate text too long');
  const m = DECIMAL_TEXT.exec(text);
  if (!m) throw new InvalidRateError(`not a plain positive decimal: ${JSON.stringify(text)}`);
  const intPart = m[1] ?? '';
  const fracPart = m[2] ?? '';
  const exp = m[3] === undefined ? 0 : Number.parseInt(m[3], 10); // a small integer, not money
  const significant = (intPart + fracPart).replace(/^0+/, '');
  if (significant.length > MAX_SIGNIFICANT_TEXT) throw new InvalidRateError('rate has too many digits');
  if (significant === '' || /^0*$/.test(significant)) throw new InvalidRateError('rate must be positive');
  let digits = BigInt(significant);
  let scale = fracPart.length - exp;
  if (scale < 0) {
    if (-scale > MAX_SIGNIFICANT_TEXT) throw new InvalidRateError('rate too large');
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return normalizeRate({ digits, scale });
}

/** Canonical form: trailing zeros of the fraction removed. Validates the invariants. */
export function normalizeRate(rate: Rate): Rate {
  let { digits, scale } = rate;
  if (typeof digits !== 'bigint' || digits <= 0n) throw new InvalidRateError('rate must be positive');
  if (!Number.isSafeInteger(scale) || scale < 0) throw new InvalidRateError('rate scale must be a non-negative integer');
  while (scale > 0 && digits % 10n === 0n) {
    digits /= 10n;
    scale -= 1;
  }
  if (scale > MAX_RATE_SCALE) throw new InvalidRateError(`rate has more than ${MAX_RATE_SCALE} decimals`);
  return Object.freeze({ digits, scale });
}

/** Plain decimal string (no exponent, no trailing zeros, no trailing point): 1 → "1", 1.0841 → "1.0841". */
export function formatRate(rate: Rate): string {
  const { digits, scale } = normalizeRate(rate);
  const s = digits.toString();
  if (scale === 0) return s;
  const padded = s.padStart(scale + 1, '0');
  return `${padded.slice(0, padded.length - scale)}.${padded.slice(padded.length - scale)}`;
}

export function rateEquals(a: Rate, b: Rate): boolean {
  const x = normalizeRate(a);
  const y = normalizeRate(b);
  return x.digits === y.digits && x.scale === y.scale;
}
