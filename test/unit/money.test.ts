import { describe, expect, it } from 'vitest';
import {
  InvalidAmountError,
  MAX_MINOR,
  formatBaseUnits,
  formatMinor,
  parseDecimalToMinor,
  scaleDown,
  scaleUp,
  stablecoinMinorToBase,
} from '../../src/domain/money.js';
import { currencyExponent, isSupportedCurrency } from '../../src/domain/currency.js';

describe('parseDecimalToMinor', () => {
  it.each([
    ['12.50', 2, 1250n],
    ['12.5', 2, 1250n],
    ['12', 2, 1200n],
    ['0', 2, 0n],
    ['0.01', 2, 1n],
    ['0.1', 2, 10n],
    ['1000000', 2, 100000000n],
    ['1500', 0, 1500n],
    ['1.234', 3, 1234n],
    ['1.2', 3, 1200n],
    ['0.000', 3, 0n],
    ['92233720368547758.07', 2, MAX_MINOR],
  ])('parses %s at exponent %i', (text, exp, want) => {
    expect(parseDecimalToMinor(text, exp)).toBe(want);
  });

  it.each([
    ['12.345', 2],
    ['1.5', 0],
    ['-1', 2],
    ['+1', 2],
    ['1e3', 2],
    ['1E3', 2],
    [' 1', 2],
    ['1 ', 2],
    ['1.', 2],
    ['.5', 2],
    ['', 2],
    ['012', 2],
    ['00.5', 2],
    ['1,00', 2],
    ['1.2.3', 2],
    ['0x10', 2],
    ['Infinity', 2],
    ['NaN', 2],
    ['١٢', 2],
    ['92233720368547758.08', 2],
    ['99999999999999999999999', 2],
    ['1.0000', 3],
  ])('refuses %j at exponent %i', (text, exp) => {
    expect(() => parseDecimalToMinor(text, exp)).toThrow(InvalidAmountError);
  });

  it.each([12.5, 12, null, undefined, {}, [], true, 10n])('refuses the non-string %s', (v) => {
    expect(() => parseDecimalToMinor(v, 2)).toThrow(InvalidAmountError);
  });
});

describe('formatMinor', () => {
  it.each([
    [1250n, 2, '12.50'],
    [1n, 2, '0.01'],
    [0n, 2, '0.00'],
    [100n, 2, '1.00'],
    [7n, 0, '7'],
    [1234n, 3, '1.234'],
    [5n, 3, '0.005'],
    [-150n, 2, '-1.50'],
    [MAX_MINOR, 2, '92233720368547758.07'],
  ])('formats %s at exponent %i as %s', (minor, exp, want) => {
    expect(formatMinor(minor, exp)).toBe(want);
  });

  it('round-trips every value of a range at each exponent', () => {
    for (const exp of [0, 2, 3]) {
      for (let i = 0n; i < 2000n; i += 7n) expect(parseDecimalToMinor(formatMinor(i, exp), exp)).toBe(i);
    }
  });
});

describe('scaling between exponents', () => {
  it('converts stablecoin minor units to base units exactly for 6 and 18 decimals', () => {
    expect(stablecoinMinorToBase(1250n, 6)).toBe(12_500_000n);
    expect(stablecoinMinorToBase(1250n, 18)).toBe(12_500_000_000_000_000_000n);
    expect(stablecoinMinorToBase(1n, 18)).toBe(10n ** 16n);
  });

  it('rounds down and up', () => {
    expect(scaleDown(12_345_678n, 6, 2, 'down')).toBe(1234n);
    expect(scaleDown(12_345_678n, 6, 2, 'up')).toBe(1235n);
    expect(scaleDown(12_340_000n, 6, 2, 'up')).toBe(1234n);
    expect(scaleDown(1n, 18, 2, 'up')).toBe(1n);
    expect(scaleDown(1n, 18, 2, 'down')).toBe(0n);
    expect(scaleDown(-15n, 1, 0, 'up')).toBe(-2n);
    expect(scaleUp(5n, 0, 3)).toBe(5000n);
    expect(() => scaleUp(5n, 3, 0)).toThrow(RangeError);
    expect(() => scaleDown(5n, 0, 3, 'down')).toThrow(RangeError);
  });

  it('formats base units with at least two decimals', () => {
    expect(formatBaseUnits(12_500_000n, 6)).toBe('12.50');
    expect(formatBaseUnits(12_345_678n, 6)).toBe('12.345678');
    expect(formatBaseUnits(10n ** 18n + 1n, 18)).toBe('1.000000000000000001');
    expect(formatBaseUnits(0n, 6)).toBe('0.00');
  });
});

describe('currency exponents', () => {
  it('follows ISO 4217 and the API precision of stablecoins', () => {
    expect(currencyExponent('usd')).toBe(2);
    expect(currencyExponent('JPY')).toBe(0);
    expect(currencyExponent('KWD')).toBe(3);
    expect(currencyExponent('USDT')).toBe(2);
    expect(currencyExponent('usdc')).toBe(2);
    expect(currencyExponent('XYZ')).toBeUndefined();
    expect(isSupportedCurrency('btc')).toBe(false);
  });
});
