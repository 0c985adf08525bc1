import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Db } from '../db/database.js';
import type { Mode } from '../db/schema.js';
import { authError } from '../domain/errors.js';
import { touchApiKeyLastUsed } from '../ledger/merchants/api-key-usage.js';
import { resolveApiKey, type ResolvedKey } from '../ledger/merchants/merchants.js';
import type { SecretBox } from '../security/secret-box.js';

// Request authentication (spec: Authentication; decisions.md: Request authentication). Order of checks:
// key → headers → merchant id → timestamp window → signature (constant time) → nonce (consumed only after a valid
// signature, so nobody without the secret can burn a merchant's nonces). The per-key rate limit sits between the
// signature and the nonce (a refused request keeps its nonce; a replayed nonce has used the key's budget); with
// `admit` both are one Redis call (docs/performance.md "API auth path"). last_used_at is touched only once all
// checks passed.

export interface AuthContext {
  keyId: string;
  merchantId: string;
  mode: Mode;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
  }
}

export interface AuthDeps {
  db: Db;
  redis: Redis;
  box: SecretBox;
  windowSeconds: number;
  redisPrefix: string;
  /** How long a resolved key stays cached in this process; revocation takes effect within this time. */
  keyCacheMs?: number;
  /** The per-key rate limit: throws to refuse; runs after the signature is verified, before the nonce is consumed. */
  limitKey?: (req: FastifyRequest, keyId: string) => Promise<void>;
  /**
   * The per-key limit and the nonce in one Redis call, replacing `limitKey` and the nonce's own SET: throws to refuse
   * (the nonce untouched), otherwise stores the nonce (SET NX EX `ttlSeconds`) and says whether it was new.
   */
  admit?: (req: FastifyRequest, keyId: string, nonce: { key: string; ttlSeconds: number }) => Promise<boolean>;
}

const NONCE_PATTERN = /^[\x21-\x7e]{1,128}$/;

export function createAuthenticator(deps: AuthDeps) {
  const cacheMs = deps.keyCacheMs ?? 5000;
  const cache = new Map<string, { key: ResolvedKey | undefined; until: number }>();
  const touched = new Map<string, number>();

  async function lookup(key: string): Promise<ResolvedKey | undefined> {
    const now = Date.now();
    const hit = cache.get(key);
    if (hit && hit.until > now) return hit.key;
    const resolved = await resolveApiKey(deps.db, deps.box, key);
    if (cache.size > 10_000) cache.clear();
    // Unknown keys are cached too, briefly, so a flood of bad keys does not become a flood of queries.
    cache.set(key, { key: resolved, until: now + cacheMs });
    return resolved;
  }

  /** Per-key limit, then the nonce: one Redis call with `admit`, two (the limit's, then SET NX) without. */
  const admit =
    deps.admit ??
    (async (req: FastifyRequest, keyId: string, n: { key: string; ttlSeconds: number }): Promise<boolean> => {
      if (deps.limitKey) await deps.limitKey(req, keyId);
      return (await deps.redis.set(n.key, '1', 'EX', n.ttlSeconds, 'NX')) === 'OK';
    });

  return async function authenticate(req: FastifyRequest): Promise<AuthContext> {
    const authz = header(req, 'authorization');
    const match = authz ? /^Bearer (sk_(?:test|live)_[0-9A-Za-z]{1,128})$/.exec(authz) : null;
    if (!match) throw authError('invalid_api_key', 'Invalid API key: send Authorization: Bearer sk_test_... or sk_live_....');

    for (const name of ['x-service-timestamp', 'x-service-nonce', 'x-service-signature'] as const) {
      if (!header(req, name)) throw authError('missing_auth_header', `Missing header ${canonical(name)}.`, canonical(name));
    }
    const timestamp = header(req, 'x-service-timestamp')!;
    const nonce = header(req, 'x-service-nonce')!;
    const signature = header(req, 'x-service-signature')!;

    const key = await lookup(match[1]!);
    if (!key) throw authError('invalid_api_key', 'Invalid API key: unknown or revoked.');

    const merchantHeader = header(req, 'x-merchant-id');
    if (merchantHeader !== undefined && merchantHeader !== key.merchantId) {
      throw authError('merchant_mismatch', 'X-Merchant-Id does not match the API key.', 'X-Merchant-Id');
    }

    if (!/^\d{1,12}$/.test(timestamp)) {
      throw authError('timestamp_out_of_window', 'X-Service-Timestamp must be Unix time in seconds.', 'X-Service-Timestamp');
    }
    const skew = Math.abs(Math.floor(Date.now() / 1000) - Number(timestamp));
    if (skew > deps.windowSeconds) {
      throw authError(
        'timestamp_out_of_window',
        `X-Service-Timestamp is more than ${deps.windowSeconds} seconds from server time.`,
        'X-Service-Timestamp',
      );
    }
    if (!NONCE_PATTERN.test(nonce)) {
      throw authError('missing_auth_header', 'X-Service-Nonce must be 1 to 128 printable ASCII characters.', 'X-Service-Nonce');
    }

    const body = req.rawBody ?? Buffer.alloc(0);
    const expected = createHmac('sha256', key.secret).update(`${timestamp}.${nonce}.`).update(body).digest();
    const given = Buffer.from(/^[0-9a-fA-F]{64}$/.test(signature) ? signature : '', 'hex');
    if (given.length !== expected.length || !timingSafeEqual(expected, given)) {
      throw authError('invalid_signature', 'X-Service-Signature does not match the request.', 'X-Service-Signature');
    }
    // Remembered for twice the window: a request outside the window is refused by its timestamp anyway.
    const stored = await admit(req, key.keyId, {
      key: `${deps.redisPrefix}:nonce:${key.keyId}:${nonce}`,
      ttlSeconds: deps.windowSeconds * 2,
    });
    if (!stored) throw authError('nonce_reused', 'X-Service-Nonce was already used with this key.', 'X-Service-Nonce');

    // Only an authenticated request counts as use of the key; this process writes at most once a minute per key.
    const now = Date.now();
    if ((touched.get(key.keyId) ?? 0) <= now - 60_000) {
      if (touched.size > 10_000) touched.clear();
      touched.set(key.keyId, now);
      touchLastUsed(deps.db, key.keyId);
    }

    return { keyId: key.keyId, merchantId: key.merchantId, mode: key.mode };
  };
}

/** Fire and forget: a failed usage stamp never fails the request. */
function touchLastUsed(db: Db, keyId: string): void {
  touchApiKeyLastUsed(db, keyId).catch(() => {});
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? undefined : s;
}

function canonical(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, d: string, c: string) => `${d}${c.toUpperCase()}`);
}
