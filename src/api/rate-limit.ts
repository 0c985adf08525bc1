import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

// Rate limits as GCRA buckets in Redis: one Lua call per check, on Redis's own clock, so every API process shares the
// same buckets and the same time. A bucket of `limit` per `periodMs` admits a burst of `limit`, then one request every
// periodMs / limit. Each bucket key holds one number (its theoretical arrival time, µs) and expires once the bucket is
// full again. A check either counts the request in every consuming bucket or, when one bucket refuses, in none.
// When Redis does not answer within `timeoutMs` the request is let through (fail open) and a line is logged.

export interface Bucket {
  /** Key below the deployment prefix and `rl:`, e.g. `ip:203.0.113.7`. */
  key: string;
  /** Requests per period; 0 turns the bucket off. */
  limit: number;
  periodMs: number;
  /** false: only ask whether one more request would be admitted, without counting it. */
  consume?: boolean;
}

export interface Verdict {
  allowed: boolean;
  /** The bucket that refused, or the one with least room left when allowed; undefined when no bucket applied. */
  bucket?: Bucket;
  remaining: number;
  /** Milliseconds until a request would be admitted again (0 when allowed). */
  retryAfterMs: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
  /** Redis did not answer and the request was let through. */
  failedOpen?: boolean;
}

export interface RateLimiter {
  check(buckets: readonly Bucket[]): Promise<Verdict>;
  /**
   * The buckets and a nonce in one Redis call (src/api/auth.ts): when every bucket admits, the request is counted and
   * then the nonce stored (SET NX EX); `nonceStored` says whether it was new. A refused request leaves the nonce
   * untouched (`nonceStored` false, `verdict.allowed` false). Unlike `check`, it never fails open: a nonce that could
   * not be stored must refuse the request, so a Redis error or timeout is thrown.
   */
  checkWithNonce(
    buckets: readonly Bucket[],
    nonce: { key: string; ttlSeconds: number },
  ): Promise<{ verdict: Verdict; nonceStored: boolean }>;
}

const GCRA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local out = {1, 0, 0}
local next_tats = {}
for i = 1, n do
  local interval = tonumber(ARGV[3 * i - 2])
  local burst = tonumber(ARGV[3 * i - 1])
  local tat = tonumber(redis.call('GET', KEYS[i]) or now)
  if tat < now then tat = now end
  local new_tat = tat + interval
  local allow_at = new_tat - interval * burst
  next_tats[i] = new_tat
  if now < allow_at and out[1] == 1 then
    out[1] = 0
    out[2] = i
    out[3] = allow_at - now
  end
  out[3 + 2 * i - 1] = math.floor((interval * burst - (new_tat - now)) / interval)
  out[3 + 2 * i] = new_tat - now
end
if out[1] == 1 then
  for i = 1, n do
    if ARGV[3 * i] == '1' then
      local ttl = math.ceil((next_tats[i] - now) / 1000) + 1
      redis.call('SET', KEYS[i], string.format('%.0f', next_tats[i]), 'PX', ttl)
    end
  end
end
`;
const SCRIPT = `local n = #KEYS${GCRA}return out`;
// The per-key limit and the nonce of a signed request (src/api/auth.ts) in one call: KEYS = the buckets, then the
// nonce key; ARGV = 3 per bucket, then the nonce's TTL in seconds. The nonce is stored (SET NX EX) only when every
// bucket admitted the request, after counting it, exactly as the two separate calls did; a last element is appended
// then: 1 the nonce was new, 0 it was already used. A refused request leaves the nonce untouched.
const NONCE_SCRIPT = `local n = #KEYS - 1${GCRA}if out[1] == 1 then
  if redis.call('SET', KEYS[n + 1], '1', 'EX', ARGV[3 * n + 1], 'NX') then out[#out + 1] = 1 else out[#out + 1] = 0 end
end
return out`;
const sha1 = (script: string) => createHash('sha1').update(script).digest('hex');
const SCRIPTS = { limit: { text: SCRIPT, sha: sha1(SCRIPT) }, nonce: { text: NONCE_SCRIPT, sha: sha1(NONCE_SCRIPT) } };

export interface RateLimiterOptions {
  redis: Redis;
  prefix: string;
  /** How long a check may wait for Redis before the request is let through. */
  timeoutMs?: number;
  /** Told when a check failed open; called at most once per 10 s. */
  onFailOpen?: (err: unknown) => void;
}

export function createRateLimiter(o: RateLimiterOptions): RateLimiter {
  const timeoutMs = o.timeoutMs ?? 500;
  let lastFailLog = 0;

  /** EVALSHA; on NOSCRIPT (a restarted or flushed Redis) EVAL, which also loads the script for the next EVALSHA. */
  async function run(script: { text: string; sha: string }, keys: string[], args: string[]): Promise<number[]> {
    try {
      return (await o.redis.evalsha(script.sha, keys.length, ...keys, ...args)) as number[];
    } catch (err) {
      if (!String((err as Error)?.message).includes('NOSCRIPT')) throw err;
      return (await o.redis.eval(script.text, keys.length, ...keys, ...args)) as number[];
    }
  }

  const active = (all: readonly Bucket[]) => all.filter((b) => b.limit > 0);
  const keysOf = (buckets: readonly Bucket[]) => buckets.map((b) => `${o.prefix}:rl:${b.key}`);
  const argsOf = (buckets: readonly Bucket[]) =>
    buckets.flatMap((b) => [String((b.periodMs * 1000) / b.limit), String(b.limit), b.consume === false ? '0' : '1']);
  const NO_BUCKET: Verdict = { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 0 };

  function verdictOf(buckets: readonly Bucket[], out: number[]): Verdict {
    const allowed = out[0] === 1;
    let index = allowed ? 0 : out[1]! - 1;
    if (allowed) {
      for (let i = 1; i < buckets.length; i++) if (out[3 + 2 * i]! < out[3 + 2 * index]!) index = i;
    }
    return {
      allowed,
      bucket: buckets[index],
      remaining: Math.max(0, out[3 + 2 * index]!),
      retryAfterMs: allowed ? 0 : Math.ceil(out[2]! / 1000),
      resetMs: Math.ceil(out[4 + 2 * index]! / 1000),
    };
  }

  return {
    async check(all) {
      const buckets = active(all);
      if (buckets.length === 0) return NO_BUCKET;
      let timer: NodeJS.Timeout | undefined;
      try {
        const out = await Promise.race([
          run(SCRIPTS.limit, keysOf(buckets), argsOf(buckets)),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`rate limit check took over ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        return verdictOf(buckets, out);
      } catch (err) {
        if (Date.now() - lastFailLog >= 10_000) {
          lastFailLog = Date.now();
          o.onFailOpen?.(err);
        }
        return { ...NO_BUCKET, failedOpen: true };
      } finally {
        clearTimeout(timer);
      }
    },

    async checkWithNonce(all, nonce) {
      const buckets = active(all);
      const ttl = String(nonce.ttlSeconds);
      if (buckets.length === 0) return { verdict: NO_BUCKET, nonceStored: (await o.redis.set(nonce.key, '1', 'EX', ttl, 'NX')) === 'OK' };
      const out = await run(SCRIPTS.nonce, [...keysOf(buckets), nonce.key], [...argsOf(buckets), ttl]);
      const verdict = verdictOf(buckets, out);
      return { verdict, nonceStored: verdict.allowed && out[3 + 2 * buckets.length] === 1 };
    },
  };
}
