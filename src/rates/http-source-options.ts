export interface HttpRateSourceOptions {
  /** Scheme, host and optional path prefix; tests point it at a local fake. */
  baseUrl?: string;
  /** Per-request timeout (AbortSignal.timeout) of the shared HTTP request. */
  timeoutMs: number;
  /** How long an answer may be served from cache, counted from when its request was sent. 0 disables caching. */
  cacheTtlMs: number;
  now?: () => number;
  fetch?: typeof fetch;
}
