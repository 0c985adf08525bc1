import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.js';
import { clientIpBucket } from './client-ip.js';
import type { RateLimiter, Verdict } from './rate-limit.js';

// The HTTP side of rate limiting (docs/rate-limits.md). Per client IP before anything else on every route but the
// health checks; per IP, failed authentications of the signed API, stricter, checked before the key is looked up;
// per API key once the signature is verified (before the nonce is consumed, so a refused request can be sent again
// unchanged). Every refusal is 429 rate_limit_exceeded with Retry-After in whole seconds; 0 turns a limit off.

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

export function createHttpLimits(limiter: RateLimiter, s: RateLimitSettings) {
  const ipBucket = (req: FastifyRequest) => clientIpBucket(req.ip);
  const authFailures = (ip: string, consume: boolean) => ({
    key: `authfail:${ip}`,
    limit: s.authFailuresPerIpPerMinute,
    periodMs: 60_000,
    consume,
  });

  const keyBucket = (keyId: string) => ({ key: `key:${keyId}`, limit: s.perKeyPerSecond, periodMs: 1000 });
  const accept = (req: FastifyRequest, v: Verdict) => {
    if (!v.allowed) throw refused(v, 'Too many requests with this API key.');
    if (v.bucket) req.rateLimit = v;
  };

  return {
    /** onRequest: the per-IP limit, and for the signed API whether this IP may still fail authentication. */
    async onRequest(req: FastifyRequest): Promise<void> {
      const route = req.routeOptions.url;
      if (route !== undefined && UNLIMITED.has(route)) return;
      const ip = ipBucket(req);
      const signed = route !== undefined && SIGNED_API.test(route);
      const v = await limiter.check([
        { key: `ip:${ip}`, limit: s.perIpPerSecond, periodMs: 1000 },
        ...(signed ? [authFailures(ip, false)] : []),
      ]);
      if (v.allowed) return;
      throw refused(
        v,
        v.bucket?.key.startsWith('authfail:')
          ? 'Too many failed authentications from this address.'
          : 'Too many requests from this address.',
      );
    },

    /** Counts one failed authentication of this request's IP. */
    async authFailed(req: FastifyRequest): Promise<void> {
      await limiter.check([authFailures(ipBucket(req), true)]);
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
