/** A source that does not quote this pair at all (the peg for EUR, a ticker without the symbol): try the next one. */
export class RateNotQuotableError extends Error {
  override readonly name = 'RateNotQuotableError';
  constructor(
    readonly source: string,
    readonly from: string,
    readonly to: string,
    detail?: string,
  ) {
    super(`${source} cannot quote ${from}/${to}${detail ? `: ${detail}` : ''}`);
  }
}

/** A source that should have answered but failed: timeout, network error, non-2xx, malformed body. */
export class RateSourceError extends Error {
  override readonly name = 'RateSourceError';
  constructor(
    readonly source: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${source}: ${message}`, options);
  }
}

export interface RateAttempt {
  source: string;
  outcome: 'not_quotable' | 'failed' | 'timeout';
  message: string;
}

/** No configured source answered within its timeout. The API maps it to 503 `rate_unavailable`; nothing is stored. */
export class RateUnavailableError extends Error {
  override readonly name = 'RateUnavailableError';
  readonly code = 'rate_unavailable';
  readonly statusCode = 503;
  constructor(
    readonly from: string,
    readonly to: string,
    readonly attempts: readonly RateAttempt[],
  ) {
    super(
      `no exchange rate available for ${from}/${to}` +
        (attempts.length ? ` (${attempts.map((a) => `${a.source}: ${a.outcome}`).join(', ')})` : ''),
    );
  }
}

/** The currency code is not in the ISO 4217 table, or the target is not USDT/USDC. A caller error (400). */
export class UnsupportedCurrencyError extends Error {
  override readonly name = 'UnsupportedCurrencyError';
  readonly code = 'parameter_invalid';
  constructor(
    readonly currency: string,
    readonly param: 'from' | 'to',
  ) {
    super(`unsupported currency for ${param}: ${JSON.stringify(currency)}`);
  }
}
