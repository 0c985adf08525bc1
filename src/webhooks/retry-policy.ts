// What an attempt's result means (interface.md, Receiver response and retry; decisions.md, Webhooks):
// 2xx success; 429, 5xx, network errors and timeouts retry; any other status (other 4xx, 1xx, 3xx: redirects are
// not followed) fails without retry. A refused target URL fails without retry.

export type AttemptResult =
  | { kind: 'response'; statusCode: number; latencyMs: number; excerpt: string }
  | { kind: 'timeout'; latencyMs: number }
  | { kind: 'network'; error: string; latencyMs: number }
  | { kind: 'refused'; reason: string };

export type Verdict = 'success' | 'retryable' | 'permanent';

export function verdictOf(r: AttemptResult): Verdict {
  switch (r.kind) {
    case 'response':
      if (r.statusCode >= 200 && r.statusCode < 300) return 'success';
      if (r.statusCode === 429 || (r.statusCode >= 500 && r.statusCode < 600)) return 'retryable';
      return 'permanent';
    case 'timeout':
    case 'network':
      return 'retryable';
    case 'refused':
      return 'permanent';
    default: {
      const never: never = r;
      return never;
    }
  }
}

/**
 * Delay before retry number `retry` (1-based), with up to `jitterRatio` added so that a burst of failures from one
 * outage does not come back as one burst. Undefined when the schedule is exhausted.
 */
export function retryDelayMs(schedule: readonly number[], retry: number, jitterRatio: number, random = Math.random): number | undefined {
  const base = schedule[retry - 1];
  if (base === undefined) return undefined;
  return Math.round(base * (1 + jitterRatio * random()));
}
