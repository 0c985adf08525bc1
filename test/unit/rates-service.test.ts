import { describe, expect, it } from 'vitest';
import { RateNotQuotableError, RateSourceError, RateUnavailableError, UnsupportedCurrencyError } from '../../src/rates/errors.js';
import { JsonNumber, MalformedJsonError, parseLosslessJson } from '../../src/rates/lossless-json.js';
import { PegRateSource } from '../../src/rates/peg-source.js';
import { parseRate, RATE_ONE, type Rate } from '../../src/rates/rate.js';
import type { RateSource } from '../../src/rates/rate-source.js';
import { RateService } from '../../src/rates/rate-service.js';
import { SingleFlightCache } from '../../src/rates/single-flight-cache.js';
import { createRateService, rateConfigFromEnv } from '../../src/rates/create-rate-service.js';

function stub(name: string, answer: (from: string, to: string, signal: AbortSignal) => Promise<Rate>): RateSource & { calls: string[] } {
  const calls: string[] = [];
  return {
    name,
    calls,
    quote: (from, to, signal) => {
      calls.push(`${from}/${to}`);
      return answer(from, to, signal);
    },
  };
}

describe('lossless JSON parser', () => {
  it('keeps numbers as their raw text', () => {
    const v = parseLosslessJson('{"a":1.084100000000000000000001,"b":[1e-7,-0,3],"c":"x\\u00e9\\n","d":true,"e":null}') as Record<
      string,
      unknown
    >;
    expect(v['a']).toEqual(new JsonNumber('1.084100000000000000000001'));
    expect(v['b']).toEqual([new JsonNumber('1e-7'), new JsonNumber('-0'), new JsonNumber('3')]);
    expect(v['c']).toBe('xé\n');
    expect(v['d']).toBe(true);
    expect(v['e']).toBeNull();
  });

  it.each(['', '{', '{"a":1', '{"a":01}', '{"a":1.}', '[1,]', '{"a" 1}', "{'a':1}", '{"a":1} x', '{"a":"\u0001"}', 'NaN', '[.5]'])(
    'rejects %j',
    (text) => {
      expect(() => parseLosslessJson(text)).toThrow(MalformedJsonError);
    },
  );

  it('does not let "__proto__" keys touch prototypes', () => {
    const v = parseLosslessJson('{"__proto__":{"polluted":"yes"}}') as Record<string, unknown>;
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(v['__proto__']).toEqual(Object.assign(Object.create(null), { polluted: 'yes' }));
  });

  it('rejects absurd nesting instead of overflowing the stack', () => {
    expect(() => parseLosslessJson('['.repeat(10000) + ']'.repeat(10000))).toThrow(MalformedJsonError);
  });
});

describe('SingleFlightCache', () => {
  it('serves within the TTL, reloads after it, never serves a stale value', async () => {
    let now = 1000;
    const cache = new SingleFlightCache<number>(30_000, () => now);
    let loads = 0;
    const load = async () => ++loads;
    expect(await cache.get('k', load)).toBe(1);
    now += 29_999;
    expect(await cache.get('k', load)).toBe(1);
    now += 1; // exactly at expiry: stale
    expect(await cache.get('k', load)).toBe(2);
    now += 30_000;
    await expect(cache.get('k', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    // the failure is not cached, and the expired value is not resurrected
    expect(await cache.get('k', load)).toBe(3);
  });

  it('counts the TTL from when the load started', async () => {
    let now = 0;
    const cache = new SingleFlightCache<string>(100, () => now);
    await cache.get('k', async () => {
      now = 90; // the request took 90 ms
      return 'v1';
    });
    now = 100;
    expect(await cache.get('k', async () => 'v2')).toBe('v2');
  });

  it('shares one in-flight load between concurrent callers, per key', async () => {
    const cache = new SingleFlightCache<string>(1000);
    let loads = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const load = async () => {
      loads++;
      await gate;
      return 'v';
    };
    const all = Promise.all([cache.get('a', load), cache.get('a', load), cache.get('a', load), cache.get('b', load)]);
    release();
    expect(await all).toEqual(['v', 'v', 'v', 'v']);
    expect(loads).toBe(2);
  });

  it('with TTL 0 caches nothing but still single-flights', async () => {
    const cache = new SingleFlightCache<number>(0);
    let loads = 0;
    const load = async () => ++loads;
    const [a, b] = await Promise.all([cache.get('k', load), cache.get('k', load)]);
    expect([a, b]).toEqual([1, 1]);
    expect(await cache.get('k', load)).toBe(2);
  });
});

describe('PegRateSource', () => {
  const peg = new PegRateSource();
  const signal = new AbortController().signal;
  it.each([
    ['USD', 'USDT'],
    ['USD', 'USDC'],
    ['USDT', 'USDC'],
    ['USDC', 'USDT'],
    ['USDT', 'USDT'],
  ] as const)('%s → %s is 1', async (from, to) => {
    expect(await peg.quote(from, to, signal)).toEqual(RATE_ONE);
  });
  it.each(['EUR', 'JPY', 'KWD', 'GBP'])('%s is not quotable', async (from) => {
    await expect(peg.quote(from, 'USDT', signal)).rejects.toBeInstanceOf(RateNotQuotableError);
  });
});

describe('RateService', () => {
  it('returns the first source that answers, in the configured order', async () => {
    const a = stub('a', (f, t) => Promise.reject(new RateNotQuotableError('a', f, t)));
    const b = stub('b', () => Promise.resolve(parseRate('1.0841')));
    const c = stub('c', () => Promise.resolve(parseRate('9')));
    const service = new RateService([a, b, c], { timeoutMs: 1000, now: () => 1_700_000_000_000 });
    const q = await service.quote('eur', 'usdt');
    expect(q).toEqual({ from: 'EUR', to: 'USDT', rate: { digits: 10841n, scale: 4 }, source: 'b', quotedAt: new Date(1_700_000_000_000) });
    expect(a.calls).toEqual(['EUR/USDT']);
    expect(c.calls).toEqual([]);
  });

  it('peg first answers USD without touching later sources', async () => {
    const live = stub('live', () => Promise.resolve(parseRate('2')));
    const service = new RateService([new PegRateSource(), live], { timeoutMs: 1000 });
    expect((await service.quote('USD', 'USDC')).source).toBe('peg');
    expect(live.calls).toEqual([]);
    expect((await service.quote('EUR', 'USDC')).source).toBe('live');
  });

  it('moves on from a source that hangs and ignores its signal, within the timeout', async () => {
    const hang = stub('hang', () => new Promise<Rate>(() => undefined));
    const ok = stub('ok', () => Promise.resolve(parseRate('1.1')));
    const service = new RateService([hang, ok], { timeoutMs: 100 });
    const t0 = performance.now();
    const q = await service.quote('EUR', 'USDT');
    const elapsed = performance.now() - t0;
    // The hung source never settles: a quote at all means the timeout moved on without it (no upper bound on the time,
    // which a loaded machine would move), after asking it once, then the next source once.
    expect(q.source).toBe('ok');
    expect([hang.calls, ok.calls]).toEqual([['EUR/USDT'], ['EUR/USDT']]);
    expect(elapsed).toBeGreaterThanOrEqual(90);
  }, 5_000);

  it('passes an abort signal that fires at the timeout', async () => {
    let seen: AbortSignal | undefined;
    const s = stub('s', (_f, _t, signal) => {
      seen = signal;
      return new Promise<Rate>((_r, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    });
    const service = new RateService([s], { timeoutMs: 50 });
    await expect(service.quote('EUR', 'USDT')).rejects.toBeInstanceOf(RateUnavailableError);
    expect(seen?.aborted).toBe(true);
  });

  it('throws RateUnavailableError listing every attempt when nobody answers', async () => {
    const service = new RateService(
      [
        new PegRateSource(),
        stub('broken', () => Promise.reject(new RateSourceError('broken', 'HTTP 500'))),
        stub('slow', () => new Promise<Rate>(() => undefined)),
      ],
      { timeoutMs: 50 },
    );
    const err = await service.quote('EUR', 'USDT').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateUnavailableError);
    const e = err as RateUnavailableError;
    expect(e.code).toBe('rate_unavailable');
    expect(e.statusCode).toBe(503);
    expect(e.attempts.map((a) => [a.source, a.outcome])).toEqual([
      ['peg', 'not_quotable'],
      ['broken', 'failed'],
      ['slow', 'timeout'],
    ]);
  }, 5_000);

  it('a source that throws synchronously-ish garbage is just a failure', async () => {
    const weird = stub('weird', () => Promise.reject('not an error'));
    const service = new RateService([weird], { timeoutMs: 50 });
    const e = (await service.quote('EUR', 'USDT').catch((x: unknown) => x)) as RateUnavailableError;
    expect(e.attempts).toEqual([{ source: 'weird', outcome: 'failed', message: 'not an error' }]);
  });

  it('rejects unsupported currencies before asking any source', async () => {
    const s = stub('s', () => Promise.resolve(RATE_ONE));
    const service = new RateService([s], { timeoutMs: 50 });
    await expect(service.quote('XYZ', 'USDT')).rejects.toBeInstanceOf(UnsupportedCurrencyError);
    await expect(service.quote('EUR', 'EUR')).rejects.toBeInstanceOf(UnsupportedCurrencyError);
    await expect(service.quote('EUR', 'DAI')).rejects.toBeInstanceOf(UnsupportedCurrencyError);
    expect(s.calls).toEqual([]);
  });

  it("stops when the caller's own signal aborts", async () => {
    const hang = stub('hang', () => new Promise<Rate>(() => undefined));
    const next = stub('next', () => Promise.resolve(RATE_ONE));
    const service = new RateService([hang, next], { timeoutMs: 5000 });
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('client went away')), 20);
    await expect(service.quote('EUR', 'USDT', ac.signal)).rejects.toThrow('client went away');
    expect(next.calls).toEqual([]);
  }, 5_000);
});

describe('createRateService and rateConfigFromEnv', () => {
  it('builds the sources in the configured order', () => {
    const s = createRateService({ sources: ['peg', 'Coinbase', 'binance'], timeoutMs: 100, cacheTtlMs: 0 });
    expect(s.sources.map((x) => x.name)).toEqual(['peg', 'coinbase', 'binance']);
  });

  it('refuses unknown, duplicate or no sources, and bad URLs', () => {
    expect(() => createRateService({ sources: ['peg', 'kraken'], timeoutMs: 100, cacheTtlMs: 0 })).toThrow(/unknown rate source/);
    expect(() => createRateService({ sources: ['peg', 'peg'], timeoutMs: 100, cacheTtlMs: 0 })).toThrow(/twice/);
    expect(() => createRateService({ sources: [], timeoutMs: 100, cacheTtlMs: 0 })).toThrow(/at least one/);
    expect(() => createRateService({ sources: ['coinbase'], coinbaseBaseUrl: 'ftp://x', timeoutMs: 100, cacheTtlMs: 0 })).toThrow();
    expect(() => createRateService({ sources: ['peg'], timeoutMs: 0, cacheTtlMs: 0 })).toThrow(RangeError);
  });

  it('reads the environment with defaults', () => {
    expect(rateConfigFromEnv({})).toEqual({
      sources: ['peg'],
      timeoutMs: 2000,
      cacheTtlMs: 30000,
      coinbaseBaseUrl: undefined,
      binanceBaseUrl: undefined,
    });
    expect(
      rateConfigFromEnv({
        RATE_SOURCES: ' peg, coinbase ,binance',
        RATE_TIMEOUT_MS: '1500',
        RATE_CACHE_TTL_MS: '0',
        RATE_COINBASE_BASE_URL: 'http://127.0.0.1:9999',
        RATE_BINANCE_BASE_URL: 'https://data-api.binance.vision',
      }),
    ).toEqual({
      sources: ['peg', 'coinbase', 'binance'],
      timeoutMs: 1500,
      cacheTtlMs: 0,
      coinbaseBaseUrl: 'http://127.0.0.1:9999',
      binanceBaseUrl: 'https://data-api.binance.vision',
    });
  });

  it.each([
    [{ RATE_SOURCES: 'peg,kraken' }, /RATE_SOURCES/],
    [{ RATE_SOURCES: ' , ' }, /RATE_SOURCES/],
    [{ RATE_TIMEOUT_MS: '0' }, /RATE_TIMEOUT_MS/],
    [{ RATE_TIMEOUT_MS: '1.5' }, /RATE_TIMEOUT_MS/],
    [{ RATE_CACHE_TTL_MS: '-1' }, /RATE_CACHE_TTL_MS/],
    [{ RATE_COINBASE_BASE_URL: 'not a url' }, /RATE_COINBASE_BASE_URL/],
    [{ RATE_BINANCE_BASE_URL: 'file:///etc/passwd' }, /RATE_BINANCE_BASE_URL/],
  ])('names the variable in errors: %o', (env, re) => {
    expect(() => rateConfigFromEnv(env)).toThrow(re);
  });
});
