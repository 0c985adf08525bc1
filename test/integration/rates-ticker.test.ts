import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BinanceRateSource } from '../../src/rates/binance-source.js';
import { CoinbaseRateSource } from '../../src/rates/coinbase-source.js';
import { convertMinor } from '../../src/rates/convert.js';
import { createRateService } from '../../src/rates/create-rate-service.js';
import { RateNotQuotableError, RateUnavailableError } from '../../src/rates/errors.js';
import { formatRate } from '../../src/rates/rate.js';
import { startFakeTicker, type FakeTicker } from '../support/fake-ticker.js';

/** The timeout of the tests about timeouts (hangs, slow answers): short, so they stay quick. */
const TIMEOUT_MS = 300;
/**
 * The timeout of every other test: an answer that comes is used. A 300 ms bound there made the first request of a file
 * (a cold connection and JIT) time out on a loaded machine (CI, 2026-11-24, load 27): "quotes EUR→USDT" failed.
 */
const ANSWER_TIMEOUT_MS = 5_000;

let coinbase: FakeTicker;
let binance: FakeTicker;
let clock: number;
const now = (): number => clock;

beforeEach(async () => {
  clock = 1_700_000_000_000;
  [coinbase, binance] = await Promise.all([startFakeTicker(), startFakeTicker()]);
});
afterEach(async () => {
  await Promise.all([coinbase.close(), binance.close()]);
});

function service(sources: string[], cacheTtlMs = 30_000, timeoutMs = ANSWER_TIMEOUT_MS) {
  return createRateService({
    sources,
    coinbaseBaseUrl: coinbase.url,
    binanceBaseUrl: binance.url,
    timeoutMs,
    cacheTtlMs,
    now,
  });
}

async function timed<T>(p: Promise<T>): Promise<{ value: T | unknown; ms: number }> {
  const t0 = performance.now();
  const value = await p.catch((e: unknown) => e);
  return { value, ms: performance.now() - t0 };
}

describe('Coinbase source against the fake ticker', () => {
  it('quotes EUR→USDT from data.rates of the EUR table', async () => {
    const q = await service(['peg', 'coinbase']).quote('eur', 'USDT');
    expect(q.source).toBe('coinbase');
    expect(formatRate(q.rate)).toBe('1.0841');
    expect(q.quotedAt).toEqual(new Date(clock));
    expect(coinbase.requests).toEqual(['/v2/exchange-rates?currency=EUR']);
    expect(convertMinor(1250n, 2, q.rate)).toBe(1356n); // 12.50 EUR → 13.56 USDT
  });

  it('one response serves USDT and USDC for the same base', async () => {
    const s = service(['coinbase']);
    expect(formatRate((await s.quote('EUR', 'USDT')).rate)).toBe('1.0841');
    expect(formatRate((await s.quote('EUR', 'USDC')).rate)).toBe('1.08395');
    expect(coinbase.requests).toHaveLength(1);
  });

  it('parses bare JSON numbers exactly, digit for digit', async () => {
    coinbase.options = { numbersUnquoted: true, coinbaseRates: { EUR: { USDT: '1.084100000000000000000000000001' } } };
    const q = await service(['coinbase']).quote('EUR', 'USDT');
    expect(q.rate).toEqual({ digits: 1084100000000000000000000000001n, scale: 30 });
  });

  it('a base without the target is "cannot quote", and the next source answers', async () => {
    const src = new CoinbaseRateSource({ baseUrl: coinbase.url, timeoutMs: ANSWER_TIMEOUT_MS, cacheTtlMs: 0 });
    await expect(src.quote('GBP', 'USDT', AbortSignal.timeout(1000))).rejects.toBeInstanceOf(RateNotQuotableError);
    binance.options = { binancePrices: { GBPUSDT: '1.27' } };
    const q = await service(['coinbase', 'binance']).quote('GBP', 'USDT');
    expect(q.source).toBe('binance');
    expect(formatRate(q.rate)).toBe('1.27');
  });

  it('an unknown base (HTTP 400) falls through to RateUnavailableError', async () => {
    const e = (await service(['peg', 'coinbase'])
      .quote('CHF', 'USDT')
      .catch((x: unknown) => x)) as RateUnavailableError;
    expect(e).toBeInstanceOf(RateUnavailableError);
    expect(e.attempts.map((a) => a.outcome)).toEqual(['not_quotable', 'failed']);
    expect(e.attempts[1]?.message).toMatch(/HTTP 400.*Invalid currency/);
  });

  it('rejects an answer for another base currency', async () => {
    coinbase.options = { coinbaseAnswerBase: 'USD' };
    const e = (await service(['coinbase'])
      .quote('EUR', 'USDT')
      .catch((x: unknown) => x)) as RateUnavailableError;
    expect(e).toBeInstanceOf(RateUnavailableError);
    expect(e.attempts[0]?.message).toMatch(/asked for EUR, answer is for USD/);
  });
});

describe('Binance source against the fake ticker', () => {
  it('quotes the direct symbol', async () => {
    const q = await service(['peg', 'binance']).quote('EUR', 'USDC');
    expect(q.source).toBe('binance');
    expect(q.rate).toEqual({ digits: 10839n, scale: 4 });
    expect(binance.requests).toEqual(['/api/v3/ticker/price?symbol=EURUSDC']);
  });

  it('an invalid symbol (400, code -1121) is "cannot quote"', async () => {
    const src = new BinanceRateSource({ baseUrl: binance.url, timeoutMs: ANSWER_TIMEOUT_MS, cacheTtlMs: 0 });
    await expect(src.quote('JPY', 'USDT', AbortSignal.timeout(1000))).rejects.toBeInstanceOf(RateNotQuotableError);
  });

  it('a non-decimal price is a failure, not a rate', async () => {
    binance.options = { binancePrices: { EURUSDT: '1,0841' } };
    const e = (await service(['binance'])
      .quote('EUR', 'USDT')
      .catch((x: unknown) => x)) as RateUnavailableError;
    expect(e).toBeInstanceOf(RateUnavailableError);
    expect(e.attempts[0]?.message).toMatch(/bad price/);
  });
});

describe('fallback on failure', () => {
  it('server hangs → next source answers once the timeout cut the hung request', async () => {
    coinbase.mode = 'hang';
    const { value, ms } = await timed(service(['peg', 'coinbase', 'binance'], 30_000, TIMEOUT_MS).quote('EUR', 'USDT'));
    expect(value).toMatchObject({ source: 'binance', rate: { digits: 10841n, scale: 4 } });
    expect(coinbase.requests).toHaveLength(1);
    // Coinbase never answers: binance's quote at all means the timeout cut coinbase's request (no upper bound on the
    // time, which a loaded machine would move).
    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
  });

  it('every source hangs → RateUnavailableError once each timeout has passed, each request cut by it', async () => {
    coinbase.mode = 'hang';
    binance.mode = 'hang';
    const { value, ms } = await timed(service(['peg', 'coinbase', 'binance'], 30_000, TIMEOUT_MS).quote('EUR', 'USDT'));
    expect(value).toBeInstanceOf(RateUnavailableError);
    expect((value as RateUnavailableError).attempts.map((a) => [a.source, a.outcome])).toEqual([
      ['peg', 'not_quotable'],
      ['coinbase', 'timeout'],
      ['binance', 'timeout'],
    ]);
    // Each source was cut by its timeout (the outcome above, not an error from the socket), one after the other.
    expect(ms).toBeGreaterThanOrEqual(2 * TIMEOUT_MS - 40);
  });

  it('a slow answer past the timeout is not used', async () => {
    coinbase.mode = { delayMs: TIMEOUT_MS + 200 };
    const q = await service(['coinbase', 'binance'], 30_000, TIMEOUT_MS).quote('EUR', 'USDT');
    expect(q.source).toBe('binance');
  });

  it('a slow answer within the timeout is used', async () => {
    coinbase.mode = { delayMs: 50 };
    const q = await service(['coinbase', 'binance']).quote('EUR', 'USDT');
    expect(q.source).toBe('coinbase');
    expect(binance.requests).toEqual([]);
  });

  it.each(['error500', 'malformed'] as const)('%s → next source', async (mode) => {
    coinbase.mode = mode;
    const q = await service(['coinbase', 'binance']).quote('EUR', 'USDT');
    expect(q.source).toBe('binance');
    expect(coinbase.requests).toHaveLength(1);
    expect(binance.requests).toHaveLength(1);
  });

  it.each([
    ['error500', /HTTP 500/],
    ['malformed', /malformed JSON/],
  ] as const)('%s on the only source → RateUnavailableError naming the failure', async (mode, re) => {
    coinbase.mode = mode;
    const e = (await service(['peg', 'coinbase'])
      .quote('EUR', 'USDT')
      .catch((x: unknown) => x)) as RateUnavailableError;
    expect(e).toBeInstanceOf(RateUnavailableError);
    expect(e.attempts[1]).toMatchObject({ source: 'coinbase', outcome: 'failed' });
    expect(e.attempts[1]?.message).toMatch(re);
  });

  it('a refused connection → next source', async () => {
    await coinbase.close();
    const q = await service(['coinbase', 'binance']).quote('EUR', 'USDT');
    expect(q.source).toBe('binance');
    coinbase = await startFakeTicker(); // for afterEach
  });

  it('USD with peg first makes no HTTP request even when the tickers are down', async () => {
    coinbase.mode = 'hang';
    binance.mode = 'error500';
    const q = await service(['peg', 'coinbase', 'binance']).quote('USD', 'USDT');
    expect(q).toMatchObject({ source: 'peg', rate: { digits: 1n, scale: 0 } });
    expect(coinbase.requests).toEqual([]);
    expect(binance.requests).toEqual([]);
  });
});

describe('caching', () => {
  it('a second call within the TTL makes no HTTP request; after the TTL a new one', async () => {
    const s = service(['coinbase'], 30_000);
    await s.quote('EUR', 'USDT');
    clock += 29_999;
    await s.quote('EUR', 'USDT');
    expect(coinbase.requests).toHaveLength(1);
    clock += 1;
    coinbase.options = { coinbaseRates: { EUR: { USDT: '1.0901' } } };
    const q = await s.quote('EUR', 'USDT');
    expect(coinbase.requests).toHaveLength(2);
    expect(formatRate(q.rate)).toBe('1.0901');
  });

  it('never serves a stale value past the TTL, even when the ticker is down', async () => {
    const s = service(['coinbase'], 30_000);
    await s.quote('EUR', 'USDT');
    clock += 30_000;
    coinbase.mode = 'error500';
    await expect(s.quote('EUR', 'USDT')).rejects.toBeInstanceOf(RateUnavailableError);
    expect(coinbase.requests).toHaveLength(2);
  });

  it('failures are not cached', async () => {
    const s = service(['coinbase'], 30_000);
    coinbase.mode = 'error500';
    await expect(s.quote('EUR', 'USDT')).rejects.toBeInstanceOf(RateUnavailableError);
    coinbase.mode = 'ok';
    expect((await s.quote('EUR', 'USDT')).source).toBe('coinbase');
    expect(coinbase.requests).toHaveLength(2);
  });

  it('TTL 0 asks every time', async () => {
    const s = service(['binance'], 0);
    await s.quote('EUR', 'USDT');
    await s.quote('EUR', 'USDT');
    expect(binance.requests).toHaveLength(2);
  });

  it('caches per base (Coinbase) and per symbol (Binance)', async () => {
    const s = service(['coinbase', 'binance'], 30_000);
    coinbase.mode = 'error500'; // force Binance
    await s.quote('EUR', 'USDT');
    await s.quote('EUR', 'USDC');
    await s.quote('EUR', 'USDT');
    expect(binance.requests).toEqual(['/api/v3/ticker/price?symbol=EURUSDT', '/api/v3/ticker/price?symbol=EURUSDC']);
    coinbase.mode = 'ok';
    await s.quote('JPY', 'USDT');
    await s.quote('KWD', 'USDT');
    await s.quote('JPY', 'USDC');
    expect(coinbase.requests.filter((r) => !r.endsWith('EUR'))).toEqual([
      '/v2/exchange-rates?currency=JPY',
      '/v2/exchange-rates?currency=KWD',
    ]);
  });
});

describe('single flight', () => {
  it('50 concurrent identical quotes make one HTTP request and get the same rate', async () => {
    coinbase.mode = { delayMs: 100 };
    const s = service(['coinbase'], 30_000);
    const quotes = await Promise.all(Array.from({ length: 50 }, () => s.quote('EUR', 'USDT')));
    expect(coinbase.requests).toHaveLength(1);
    expect(new Set(quotes.map((q) => formatRate(q.rate)))).toEqual(new Set(['1.0841']));
  });

  it('single-flights even with caching disabled, and a hang fails all waiters with the one timeout', async () => {
    binance.mode = 'hang';
    const s = service(['binance'], 0, TIMEOUT_MS);
    const { value, ms } = await timed(Promise.all(Array.from({ length: 20 }, () => s.quote('EUR', 'USDT'))));
    expect(value).toBeInstanceOf(RateUnavailableError);
    expect(binance.requests).toHaveLength(1);
    // Every waiter failed with the one request's timeout (binance never answers; no upper bound on the time).
    expect((value as RateUnavailableError).attempts.map((a) => [a.source, a.outcome])).toEqual([['binance', 'timeout']]);
    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
  });

  it('different pairs are fetched in parallel, not serialised', async () => {
    // Structural, not timed: each answer is held 3 s, and all three requests reach the server before any answer
    // comes back (in series, the second would only be sent after the first answer).
    coinbase.mode = { delayMs: 3_000 };
    const s = service(['coinbase'], 30_000);
    let settled = 0;
    const all = Promise.all(
      [s.quote('EUR', 'USDT'), s.quote('JPY', 'USDT'), s.quote('KWD', 'USDT')].map((p) => p.finally(() => settled++)),
    );
    for (const end = Date.now() + 10_000; coinbase.requests.length < 3 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
    expect(coinbase.requests).toHaveLength(3);
    expect(settled).toBe(0);
    await all;
    expect(settled).toBe(3);
  });
});
