import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.js';
import { clientIpBucket } from './client-ip.js';
import type { RateLimiter, Verdict } from './rate-limit.js';

// The HTTP side of rate limiting (docs/rate-limits.md). Per client IP before anything else on every route but the
// health checks; per IP, failed authentications of the signed API, checked before the key is looked up; per API key
// once the signature is verified (before the nonce is consumed, so a refused request can be sent again unchanged).
// Every refusal is 429 rate_limit_exceeded with Retry-After in whole seconds; 0 turns a limit off.
//
// Failed authentications (docs/rate-limits.md "Failed authentications"): an IP that spent its failure budget is
// throttled, not shut: each API key it presents gets a failure budget of its own there, and the IP a cap on the
// failures of all its keys together (THROTTLED_CAP_FACTOR budgets). A key within its budget is still looked up and
// its signature verified, so a valid signature (which proves the secret) is served even when another client behind
// the same egress IP keeps failing; a key or an IP over its budget is refused before any lookup or verification.

/** While an IP is throttled, the failures of all the keys it presents together: this many times the IP's budget. */
export const THROTTLED_CAP_FACTOR = 10;

export interface RateLimitSettings {
  perKeyPerSecond: number;
  perIpPerSecond: number;
  authFailuresPerIpPerMinute: number;
}

export const RATE_LIMITS_OFF: RateLimitSettings = { perKeyPerSecond: 0, perIpPerSecond: 0, authFailuresPerIpPerMinute: 0 };

declare module 'fastify' {
  interface FastifyRequest {
    /** The per-key verdict of a signed request, reported in RateLimit-* headers. */
    rateLimit?: Verdict;
    /** Set when the client IP is throttled for failed authentications: the tag of the API key the request presents. */
    authThrottledKey?: string;
  }
}

/** A 429 in the spec's error shape; `headers` (Retry-After, RateLimit-*) go out with it. */
export class RateLimitedError extends ApiError {
  constructor(
    message: string,
    readonly headers: Record<string, string>,
  ) {
    super(429, 'rate_limit_error', 'rate_limit_exceeded', message);
  }
}

function rateLimitHeaders(v: Verdict): Record<string, string> {
  if (!v.bucket) return {};
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(v.bucket.limit),
    'RateLimit-Remaining': String(v.remaining),
    'RateLimit-Reset': String(Math.ceil(v.resetMs / 1000)),
  };
  if (!v.allowed) headers['Retry-After'] = String(Math.max(1, Math.ceil(v.retryAfterMs / 1000)));
  return headers;
}

function refused(v: Verdict, message: string): RateLimitedError {
  const headers = rateLimitHeaders(v);
  const seconds = headers['Retry-After'] ?? '1';
  return new RateLimitedError(`${message} Retry after ${seconds} s.`, { 'Retry-After': seconds, ...headers });
}

const SIGNED_API = /^\/(?:api\/)?v1\//;
const UNLIMITED = new Set(['/healthz', '/readyz']);

/** The API key a request presents, as a tag for its failure bucket (a hash: keys are never stored in Redis). */
function presentedKeyTag(req: FastifyRequest): string {
  const v = req.headers.authorization;
  const m = typeof v === 'string' ? /^Bearer (sk_(?:test|live)_[0-9A-Za-z]{1,128})$/.exec(v) : null;
  return m ? createHash('sha256').update(m[1]!).digest('hex').slice(0, 24) : 'none';
}

export function createHttpLimits(limiter: RateLimiter, s: RateLimitSettings) {
  const ipBucket = (req: FastifyRequest) => clientIpBucket(req.ip);
  const failures = (key: string, limit: number, consume: boolean) => ({ key, limit, periodMs: 60_000, consume });
  const ipFailures = (ip: string, consume: boolean) => failures(`authfail:${ip}`, s.authFailuresPerIpPerMinute, consume);
  const keyFailures = (ip: string, tag: string, consume: boolean) =>
    failures(`authfail:${ip}:key:${tag}`, s.authFailuresPerIpPerMinute, consume);
  const throttledFailures = (ip: string, consume: boolean) =>
    failures(`authfail:${ip}:throttled`, s.authFailuresPerIpPerMinute * THROTTLED_CAP_FACTOR, consume);
  const perIp = (ip: string) => ({ key: `ip:${ip}`, limit: s.perIpPerSecond, periodMs: 1000 });

  const keyBucket = (keyId: string) => ({ key: `key:${keyId}`, limit: s.perKeyPerSecond, periodMs: 1000 });
  const accept = (req: FastifyRequest, v: Verdict) => {
    if (!v.allowed) throw refused(v, 'Too many requests with this API key.');
    if (v.bucket) req.rateLimit = v;
  };

  return {
    /**
     * onRequest: the per-IP limit; for the signed API, whether this IP may still fail authentication, and once it may
     * not (throttled), whether the key it presents and the IP's cap still may.
     */
    async onRequest(req: FastifyRequest): Promise<void> {
      const route = req.routeOptions.url;
      if (route !== undefined && UNLIMITED.has(route)) return;
      const ip = ipBucket(req);
      const signed = route !== undefined && SIGNED_API.test(route);
      const v = await limiter.check([perIp(ip), ...(signed ? [ipFailures(ip, false)] : [])]);
      if (v.allowed) return;
      if (!v.bucket?.key.startsWith('authfail:')) throw refused(v, 'Too many requests from this address.');
      // Throttled for failed authentications. A refused check counted nothing: count the request per IP now.
      const counted = await limiter.check([perIp(ip)]);
      if (!counted.allowed) throw refused(counted, 'Too many requests from this address.');
      const tag = presentedKeyTag(req);
      const t = await limiter.check([keyFailures(ip, tag, false), throttledFailures(ip, false)]);
      if (!t.allowed) {
        throw refused(
          t,
          t.bucket?.key.endsWith(':throttled')
            ? 'Too many failed authentications from this address.'
            : 'Too many failed authentications from this address with this API key.',
        );
      }
      req.authThrottledKey = tag;
    },

    /** Counts one failed authentication: in the IP's budget, or (throttled) in the key's budget and the IP's cap. */
    async authFailed(req: FastifyRequest): Promise<void> {
      const ip = ipBucket(req);
      const tag = req.authThrottledKey;
      await limiter.check(tag === undefined ? [ipFailures(ip, true)] : [keyFailures(ip, tag, true), throttledFailures(ip, true)]);
    },

    /** The per-key limit; called with a verified signature, before the nonce is consumed. */
    async perKey(req: FastifyRequest, keyId: string): Promise<void> {
      accept(req, await limiter.check([keyBucket(keyId)]));
    },

    /**
     * The per-key limit and the nonce in one Redis call (same order and outcomes as `perKey` then the nonce's SET NX):
     * 429 leaves the nonce untouched; otherwise true when the nonce was new. Fails closed, as the nonce always did.
     */
    async perKeyAndNonce(req: FastifyRequest, keyId: string, nonce: { key: string; ttlSeconds: number }): Promise<boolean> {
      const r = await limiter.checkWithNonce([keyBucket(keyId)], nonce);
      accept(req, r.verdict);
      return r.nonceStored;
    },
  };
}

export function setRateLimitHeaders(reply: FastifyReply, v: Verdict | undefined): void {
  if (v) reply.headers(rateLimitHeaders(v));
}
