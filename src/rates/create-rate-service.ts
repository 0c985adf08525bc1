import { BinanceRateSource } from './binance-source.js';
import { CoinbaseRateSource } from './coinbase-source.js';
import { PegRateSource } from './peg-source.js';
import type { RateSource } from './rate-source.js';
import { RateService } from './rate-service.js';

export const RATE_SOURCE_NAMES = ['peg', 'coinbase', 'binance'] as const;
export type RateSourceName = (typeof RATE_SOURCE_NAMES)[number];

export interface RateServiceConfig {
  /** Fallback order, e.g. ['peg', 'coinbase']. Names from RATE_SOURCE_NAMES; no duplicates. */
  sources: string[];
  coinbaseBaseUrl?: string;
  binanceBaseUrl?: string;
  timeoutMs: number;
  cacheTtlMs: number;
  now?: () => number;
  fetch?: typeof fetch;
}

export function createRateService(config: RateServiceConfig): RateService {
  if (config.sources.length === 0) throw new TypeError('at least one rate source must be configured');
  const seen = new Set<string>();
  const http = { timeoutMs: config.timeoutMs, cacheTtlMs: config.cacheTtlMs, now: config.now, fetch: config.fetch };
  const sources = config.sources.map((raw): RateSource => {
    const name = raw.trim().toLowerCase();
    if (seen.has(name)) throw new TypeError(`rate source listed twice: ${name}`);
    seen.add(name);
    switch (name) {
      case 'peg':
        return new PegRateSource();
      case 'coinbase':
        return new CoinbaseRateSource({ ...http, baseUrl: config.coinbaseBaseUrl });
      case 'binance':
        return new BinanceRateSource({ ...http, baseUrl: config.binanceBaseUrl });
      default:
        throw new TypeError(`unknown rate source ${JSON.stringify(raw)}; known: ${RATE_SOURCE_NAMES.join(', ')}`);
    }
  });
  return new RateService(sources, { timeoutMs: config.timeoutMs, now: config.now });
}

export const RATE_ENV_DEFAULTS = {
  RATE_SOURCES: 'peg',
  RATE_TIMEOUT_MS: 2000,
  RATE_CACHE_TTL_MS: 30000,
} as const;

/**
 * Reads the RATE_* variables (docs/rates.md). Errors name the variable. The lead may fold this into the
 * application's config schema instead; the meaning and defaults must stay the same.
 */
export function rateConfigFromEnv(env: Record<string, string | undefined>): RateServiceConfig {
  const sources = (env['RATE_SOURCES'] ?? RATE_ENV_DEFAULTS.RATE_SOURCES)
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');
  for (const s of sources) {
    if (!(RATE_SOURCE_NAMES as readonly string[]).includes(s)) {
      throw new TypeError(`RATE_SOURCES: unknown source ${JSON.stringify(s)}; known: ${RATE_SOURCE_NAMES.join(', ')}`);
    }
  }
  if (sources.length === 0) throw new TypeError('RATE_SOURCES: must name at least one source');
  const int = (name: string, fallback: number, min: number): number => {
    const v = env[name];
    if (v === undefined || v === '') return fallback;
    if (!/^\d+$/.test(v) || Number(v) < min || !Number.isSafeInteger(Number(v))) {
      throw new TypeError(`${name}: expected an integer >= ${min}, got ${JSON.stringify(v)}`);
    }
    return Number(v);
  };
  const url = (name: string): string | undefined => {
    const v = env[name];
    if (v === undefined || v === '') return undefined;
    try {
      const u = new URL(v);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
    } catch {
      throw new TypeError(`${name}: expected an http(s) URL, got ${JSON.stringify(v)}`);
    }
    return v;
  };
  return {
    sources,
    timeoutMs: int('RATE_TIMEOUT_MS', RATE_ENV_DEFAULTS.RATE_TIMEOUT_MS, 1),
    cacheTtlMs: int('RATE_CACHE_TTL_MS', RATE_ENV_DEFAULTS.RATE_CACHE_TTL_MS, 0),
    coinbaseBaseUrl: url('RATE_COINBASE_BASE_URL'),
    binanceBaseUrl: url('RATE_BINANCE_BASE_URL'),
  };
}
