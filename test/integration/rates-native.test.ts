import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateUnavailableError } from '../../src/rates/errors.js';
import { NATIVE_COINS, createNativePriceService } from '../../src/rates/native-prices.js';
import { NETWORKS } from '../../chains/registry.js';
import { parseRate } from '../../src/rates/rate.js';
import { feeShareBps, nativeInTokenBase } from '../../src/treasury/policy.js';
import { startFakeTicker, type FakeTicker } from '../support/fake-ticker.js';

// Native coin prices (ETH, BNB, TRX, SOL in a stablecoin) from the fake of Coinbase's and Binance's public tickers,
// in their documented shapes, and the fee pricing the sweep policy does with them: exact, rounded against us.
let ticker: FakeTicker;

beforeAll(async () => {
  ticker = await startFakeTicker({
    coinbaseRates: { ETH: { USDT: '3012.34', USDC: '3011.9' }, SOL: { USDC: '151.2' } },
    binancePrices: { BNBUSDT: '612.50000000', TRXUSDT: '0.24130000' },
  });
});
afterAll(async () => ticker?.close());

// No test here is about timeouts: an answer that comes is used (1 s timed out the file's first, cold request under load
// 25-45 in CI, 2026-11-24).
const service = (sources: string[]) =>
  createNativePriceService({ sources, coinbaseBaseUrl: ticker.url, binanceBaseUrl: ticker.url, timeoutMs: 10_000, cacheTtlMs: 0 });

describe('native coin prices', () => {
  it('reads each coin from the first source that quotes it, in order', async () => {
    const s = service(['coinbase', 'binance']);
    expect(await s.price('ETH', 'USDT')).toMatchObject({ source: 'coinbase', rate: parseRate('3012.34') });
    expect(await s.price('SOL', 'USDC')).toMatchObject({ source: 'coinbase', rate: parseRate('151.2') });
    // Coinbase does not know BNB here (HTTP 400): Binance's BNBUSDT answers.
    expect(await s.price('BNB', 'USDT')).toMatchObject({ source: 'binance', rate: parseRate('612.5') });
    expect(await s.price('TRX', 'USDT')).toMatchObject({ source: 'binance', rate: parseRate('0.2413') });
    // One fee coin per registry network (Base, Arbitrum One and OP Mainnet pay in ETH; Polygon PoS in POL).
    expect(Object.entries(NATIVE_COINS).map(([n, c]) => [n, c.symbol])).toEqual(NETWORKS.map((n) => [n.id, n.nativeCoin.symbol]));
    expect([...new Set(Object.values(NATIVE_COINS).map((c) => c.symbol))]).toEqual(['ETH', 'BNB', 'TRX', 'SOL', 'POL']);
  });

  it('answers RateUnavailableError when no source quotes the coin (never a made-up price)', async () => {
    await expect(service(['binance']).price('SOL', 'USDT')).rejects.toBeInstanceOf(RateUnavailableError);
    ticker.mode = 'error500';
    try {
      await expect(service(['coinbase', 'binance']).price('ETH', 'USDT')).rejects.toBeInstanceOf(RateUnavailableError);
    } finally {
      ticker.mode = 'ok';
    }
    expect(() => service(['peg'])).toThrow(/unknown source "peg"/);
  });
});

describe('fee pricing', () => {
  it('prices native base units in token base units, rounded up, and the share in basis points, rounded up', () => {
    // 0.0001 ETH at 3000 USDT (6 decimals) = 0.3 USDT = 300000 base units.
    expect(nativeInTokenBase(10n ** 14n, parseRate('3000'), 18, 6)).toBe(300_000n);
    // 1 wei is worth a fraction of a base unit: rounded up to 1.
    expect(nativeInTokenBase(1n, parseRate('3000'), 18, 6)).toBe(1n);
    // BSC's 18-decimal tokens: 21000 gwei of BNB at 612.5 = 0.0128625 USDT.
    expect(nativeInTokenBase(21_000n * 10n ** 9n, parseRate('612.5'), 18, 18)).toBe(12_862_500_000_000_000n);
    // TRX (6 decimals) at 0.2413: 27.3 TRX = 6.58749 USDT.
    expect(nativeInTokenBase(27_300_000n, parseRate('0.2413'), 6, 6)).toBe(6_587_490n);
    expect(feeShareBps(300_000n, 30_000_000n)).toBe(100);
    expect(feeShareBps(300_001n, 30_000_000n)).toBe(101);
    expect(feeShareBps(1n, 0n)).toBe(10_000);
  });
});
