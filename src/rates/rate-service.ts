import { isSettlementCurrency, isSupportedCurrency, type SettlementCurrency } from './currencies.js';
import { RateNotQuotableError, RateUnavailableError, UnsupportedCurrencyError, type RateAttempt } from './errors.js';
import { raceAbort } from './abort.js';
import type { Rate } from './rate.js';
import type { RateSource } from './rate-source.js';

/** What a session locks: the rate, who gave it and when. */
export interface RateQuote {
  from: string;
  to: SettlementCurrency;
  rate: Rate;
  source: string;
  quotedAt: Date;
}

export interface RateServiceOptions {
  /** Each source gets at most this long; then the next source is tried. */
  timeoutMs: number;
  now?: () => number;
}

/**
 * Tries the configured sources in order and returns the first answer. Worst case it takes
 * sources.length × timeoutMs, then throws RateUnavailableError. Currency codes are accepted in any case.
 */
export class RateService {
  private readonly now: () => number;

  constructor(
    readonly sources: readonly RateSource[],
    private readonly options: RateServiceOptions,
  ) {
    if (!Number.isFinite(options.timeoutMs) || options.timeoutMs <= 0) throw new RangeError('timeoutMs must be positive');
    this.now = options.now ?? Date.now;
  }

  async quote(from: string, to: string, signal?: AbortSignal): Promise<RateQuote> {
    const f = from.toUpperCase();
    const t = to.toUpperCase();
    if (!isSupportedCurrency(f)) throw new UnsupportedCurrencyError(from, 'from');
    if (!isSettlementCurrency(t)) throw new UnsupportedCurrencyError(to, 'to');
    const attempts: RateAttempt[] = [];
    for (const source of this.sources) {
      signal?.throwIfAborted();
      const timeout = AbortSignal.timeout(this.options.timeoutMs);
      const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
      try {
        // raceAbort: a source that ignores its signal still cannot hold the caller past the timeout.
        const rate = await raceAbort(source.quote(f, t, combined), combined);
        return { from: f, to: t, rate, source: source.name, quotedAt: new Date(this.now()) };
      } catch (e) {
        if (signal?.aborted) throw signal.reason;
        attempts.push({
          source: source.name,
          outcome: e instanceof RateNotQuotableError ? 'not_quotable' : timeout.aborted ? 'timeout' : 'failed',
          message: e instanceof Error ? e.message : String(e),
        });
      }
    }
    throw new RateUnavailableError(f, t, attempts);
  }
}
