import { clientIpBucket } from '../../api/client-ip.js';
import type { Bucket } from '../../api/rate-limit.js';
import { ApiError } from '../../domain/errors.js';
import type { ConsoleDeps } from '../deps.js';

// The sign-in's lockout: failed sign-ins counted in two GCRA buckets (src/api/rate-limit.ts), one per account (its
// lowercased email, known or not) and one per client IP (an IPv6 /64), each settings.loginFailures* per 15 minutes.
// Before checking a password the buckets are only peeked (consume: false); a failure is then counted in both.

const PERIOD_MS = 15 * 60_000;

function buckets(deps: ConsoleDeps, email: string, ip: string, consume: boolean): Bucket[] {
  return [
    {
      key: `console-login:account:${email.trim().toLowerCase()}`,
      limit: deps.settings.loginFailuresPerAccount,
      periodMs: PERIOD_MS,
      consume,
    },
    { key: `console-login:ip:${clientIpBucket(ip)}`, limit: deps.settings.loginFailuresPerIp, periodMs: PERIOD_MS, consume },
  ];
}

export const loginLocked = (retryAfterMs: number, perAccount: boolean): ApiError => {
  const minutes = Math.max(1, Math.ceil(retryAfterMs / 60_000));
  const who = perAccount ? 'this account' : 'this network address';
  return new ApiError(
    429,
    'rate_limit_error',
    'login_locked',
    `Too many failed sign-ins for ${who}. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
  );
};

/** The lockout in force, if either bucket has no room left for one more failure; null when a sign-in may be tried. */
export async function currentLockout(
  deps: ConsoleDeps,
  email: string,
  ip: string,
): Promise<{ retryAfterMs: number; error: ApiError } | null> {
  const v = await deps.limiter.check(buckets(deps, email, ip, false));
  if (v.allowed) return null;
  return { retryAfterMs: v.retryAfterMs, error: loginLocked(v.retryAfterMs, v.bucket?.key.includes(':account:') ?? true) };
}

/** Counts one failure in both buckets; true when it used up the last room (the account or the address is now locked). */
export async function recordFailure(deps: ConsoleDeps, email: string, ip: string): Promise<boolean> {
  const v = await deps.limiter.check(buckets(deps, email, ip, true));
  return !v.allowed || v.remaining === 0;
}
