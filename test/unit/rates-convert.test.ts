import { describe, expect, it } from 'vitest';
import { convertMinor } from '../../src/rates/convert.js';
import { currencyExponent, isSupportedCurrency } from '../../src/rates/currencies.js';
import { InvalidRateError, formatRate, parseRate, rateEquals, type Rate } from '../../src/rates/rate.js';

const r = (text: string): Rate => parseRate(text);

describe('parseRate: exact decimal text, never Number()', () => {
  it.each([
    ['1', 1n, 0],
    ['1.0841', 10841n, 4],
    ['1.08410000', 10841n, 4],
    ['0.92', 92n, 2],
    ['0.006653', 6653n, 6],
    ['162.9', 1629n, 1],
    ['1000', 1000n, 0],
    ['00012.50', 125n, 1],
    ['1e-3', 1n, 3],
    ['1E3', 1000n, 0],
    ['12.5E+2', 1250n, 0],
    ['1.2345e2', 12345n, 2],
    ['0.000000000000000000000000000001', 1n, 30],
  ])('%s → %s / 10^%s', (text, digits, scale) => {
    expect(parseRate(text)).toEqual({ digits, scale });
  });

  it('keeps every digit a double would lose', () => {
    const text = '1.084100000000000000000000000001';
    expect(Number(text)).toBe(1.0841); // the float rounds it away ...
    expect(parseRate(text)).toEqual({ digits: 1084100000000000000000000000001n, scale: 30 }); // ... we do not
    expect(formatRate(parseRate(text))).toBe(text);
  });

  it.each(['', '-1', '+1', '1.', '.5', '0', '0.000', '0e5', '1,5', ' 1', '1 ', 'NaN', 'Infinity', '0x10', '1e', 'abc', '1.2.3'])(
    'rejects %j',
    (text) => {
      expect(() => parseRate(text)).toThrow(InvalidRateError);
    },
  );

  it('rejects values beyond the bounds instead of building huge bigints', () => {
    expect(() => parseRate('1e-61')).toThrow(InvalidRateError);
    expect(() => parseRate('1e9999')).toThrow(InvalidRateError);
    expect(() => parseRate('1'.repeat(81))).toThrow(InvalidRateError);
    expect(() => parseRate(`0.${'0'.repeat(200)}1`)).toThrow(InvalidRateError);
    expect(parseRate('1e-60')).toEqual({ digits: 1n, scale: 60 });
  });
});

describe('formatRate', () => {
  it.each([
    [{ digits: 10841n, scale: 4 }, '1.0841'],
    [{ digits: 108410000n, scale: 8 }, '1.0841'],
    [{ digits: 5n, scale: 3 }, '0.005'],
    [{ digits: 1000n, scale: 3 }, '1'],
    [{ digits: 12n, scale: 0 }, '12'],
    [{ digits: 1200n, scale: 0 }, '1200'],
    [{ digits: 1n, scale: 30 }, '0.000000000000000000000000000001'],
    [{ digits: 123456789012345678901234567890n, scale: 10 }, '12345678901234567890.123456789'],
  ])('%o → %s', (rate, text) => {
    expect(formatRate(rate)).toBe(text);
  });

  it('never uses exponent notation and round-trips through parseRate', () => {
    for (const t of ['0.0000001', '100000000000000000000000', '3.14159265358979323846264338327950288', '0.5']) {
      const s = formatRate(parseRate(t));
      expect(s).not.toMatch(/e/i);
      expect(rateEquals(parseRate(s), parseRate(t))).toBe(true);
    }
  });

  it('rejects a non-positive or malformed rate', () => {
    expect(() => formatRate({ digits: 0n, scale: 0 })).toThrow(InvalidRateError);
    expect(() => formatRate({ digits: -5n, scale: 1 })).toThrow(InvalidRateError);
    expect(() => formatRate({ digits: 5n, scale: 1.5 })).toThrow(InvalidRateError);
    expect(() => formatRate({ digits: 5n, scale: -1 })).toThrow(InvalidRateError);
  });
});

describe('convertMinor: amount × rate, rounded up to the target minor unit', () => {
  it.each([
    // [amountMinor, from, rate, to, expected, what]
    [10000n, 'EUR', '1.0841', 'USDT', 10841n, '100.00 EUR × 1.0841 = 108.41 exactly'],
    [1000n, 'EUR', '1.0841', 'USDT', 1085n, '10.00 EUR → 10.841 → 10.85'],
    [1250n, 'EUR', '1.0841', 'USDT', 1356n, '12.50 EUR → 13.55125 → 13.56'],
    [1999n, 'USD', '1', 'USDT', 1999n, 'peg keeps the amount'],
    [1n, 'EUR', '1.0841', 'USDT', 2n, '0.01 EUR → 0.010841 → 0.02'],
    [1n, 'EUR', '0.000001', 'USDT', 1n, 'any positive remainder rounds up to one minor unit'],
    [0n, 'EUR', '1.0841', 'USDT', 0n, 'zero stays zero'],
    [100n, 'EUR', '0.99', 'USDT', 99n, '1.00 × 0.99 = 0.99 exactly'],
    [1000n, 'JPY', '0.006653', 'USDT', 666n, 'JPY exponent 0: 1000 JPY → 6.653 → 6.66'],
    [1500n, 'JPY', '0.0066', 'USDT', 990n, '1500 JPY → 9.90 exactly'],
    [1n, 'JPY', '0.006653', 'USDT', 1n, '1 JPY → 0.006653 → 0.01'],
    [1234n, 'KWD', '3.2541', 'USDT', 402n, 'KWD exponent 3: 1.234 KWD → 4.0155594 → 4.02'],
    [1000n, 'KWD', '3.25', 'USDT', 325n, '1.000 KWD → 3.25 exactly'],
    [1n, 'KWD', '3.2541', 'USDT', 1n, '0.001 KWD → 0.0032541 → 0.01'],
    [10n, 'KWD', '1', 'USDT', 1n, '0.010 KWD at par → 0.01 exactly'],
    [11n, 'KWD', '1', 'USDT', 2n, '0.011 KWD at par → 0.02'],
  ])('%s %s × %s → %s %s (%s)', (amount, from, rate, to, expected) => {
    expect(convertMinor(amount, currencyExponent(from)!, r(rate), currencyExponent(to)!)).toBe(expected);
  });

  it('defaults the target exponent to 2', () => {
    expect(convertMinor(1250n, 2, r('1.0841'))).toBe(1356n);
  });

  it('converts to token base units exactly (6 and 18 decimals)', () => {
    expect(convertMinor(1250n, 2, r('1.0841'), 6)).toBe(13551250n);
    expect(convertMinor(1250n, 2, r('1.0841'), 18)).toBe(13551250000000000000n);
    expect(convertMinor(1n, 0, r('0.1234567'), 6)).toBe(123457n); // 0.1234567 → 0.123457 (up)
  });

  it('handles huge amounts with no loss', () => {
    const amount = 10n ** 30n; // 10^28 EUR
    expect(convertMinor(amount, 2, r('1.0841'))).toBe(10841n * 10n ** 26n);
    const max = 2n ** 256n - 1n;
    // (2^256 − 1) × 1 at par is itself
    expect(convertMinor(max, 2, r('1'))).toBe(max);
    // ×0.5 of an odd number rounds up by exactly one half unit
    expect(convertMinor(max, 2, r('0.5'))).toBe(max / 2n + 1n);
    const big = 123456789012345678901234567890123456789n;
    expect(convertMinor(big, 3, r('3.2541'))).toBe((big * 32541n + 99999n) / 100000n);
  });

  it('agrees with the definition of the ceiling on many random cases', () => {
    let seed = 0x2545f491;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed % n;
    };
    const randBig = (maxDigits: number): bigint => {
      let s = '';
      const len = 1 + rand(maxDigits);
      for (let i = 0; i < len; i++) s += String(rand(10));
      return BigInt(s);
    };
    for (let i = 0; i < 2000; i++) {
      const amount = randBig(30);
      const digits = randBig(20) + 1n;
      const scale = rand(19);
      const from = [0, 2, 3][rand(3)]!;
      const to = [0, 2, 6, 18][rand(4)]!;
      const got = convertMinor(amount, from, { digits, scale }, to);
      // exact value in target units is amount·digits·10^to / 10^(from+scale); got is its ceiling:
      const num = amount * digits * 10n ** BigInt(to);
      const den = 10n ** BigInt(from + scale);
      expect(got * den >= num).toBe(true);
      expect((got - 1n) * den < num).toBe(true);
    }
  });

  it('never rounds down: the target is worth at least the source amount', () => {
    // 0.01 USDT steps; value of the converted amount back in EUR must be ≥ the price
    const rate = r('1.0841');
    for (let amount = 1n; amount <= 500n; amount++) {
      const target = convertMinor(amount, 2, rate, 2);
      expect(target * 10n ** 4n >= amount * rate.digits).toBe(true);
    }
  });

  it('rejects bad inputs', () => {
    expect(() => convertMinor(-1n, 2, r('1'))).toThrow(RangeError);
    expect(() => convertMinor(1n, -1, r('1'))).toThrow(RangeError);
    expect(() => convertMinor(1n, 2.5, r('1'))).toThrow(RangeError);
    expect(() => convertMinor(1n, 2, r('1'), 37)).toThrow(RangeError);
    expect(() => convertMinor(1n, 2, { digits: 0n, scale: 0 })).toThrow(InvalidRateError);
    expect(() => convertMinor(100 as unknown as bigint, 2, r('1'))).toThrow(TypeError);
  });
});

describe('currencies', () => {
  it.each([
    ['USD', 2],
    ['EUR', 2],
    ['GBP', 2],
    ['JPY', 0],
    ['KRW', 0],
    ['CLP', 0],
    ['VND', 0],
    ['KWD', 3],
    ['BHD', 3],
    ['TND', 3],
    ['USDT', 2],
    ['USDC', 2],
  ])('%s has exponent %i', (code, e) => {
    expect(currencyExponent(code)).toBe(e);
    expect(isSupportedCurrency(code)).toBe(true);
  });

  it('accepts codes in any case (the API shows them lowercase)', () => {
    expect(currencyExponent('usd')).toBe(2);
    expect(currencyExponent('jPy')).toBe(0);
  });

  it.each(['XXX', 'XAU', 'BTC', '', 'EURO', 'CLF', '__proto__', 'toString'])('%j is not supported', (code) => {
    expect(currencyExponent(code)).toBeUndefined();
    expect(isSupportedCurrency(code)).toBe(false);
  });

  it('covers the active ISO 4217 currencies', () => {
    for (const c of ['CHF', 'CNY', 'INR', 'BRL', 'MXN', 'TRY', 'ZAR', 'AED', 'SGD', 'HKD', 'PLN', 'SEK', 'ISK', 'OMR', 'JOD']) {
      expect(isSupportedCurrency(c), c).toBe(true);
    }
  });
});
