import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

// A per-merchant semaphore shared by every worker process: a sorted set of leases scored by expiry. A worker that
// dies keeps its lease only until it expires, so a crash never locks a merchant out for good.

const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  return 1
end
return 0`;

export interface MerchantLimiter {
  /** A lease token, or undefined when the merchant already has `limit` deliveries in flight. */
  acquire(merchantId: string): Promise<string | undefined>;
  release(merchantId: string, token: string): Promise<void>;
}

/** `redis` should be a connection of the limiter's own: the script is registered on it (EVALSHA after the first call). */
export function createMerchantLimiter(redis: Redis, keyPrefix: string, limit: number, leaseMs: number): MerchantLimiter {
  const key = (m: string) => `${keyPrefix}:webhook-inflight:${m}`;
  redis.defineCommand('webhookLeaseAcquire', { numberOfKeys: 1, lua: ACQUIRE });
  const acquire = (redis as unknown as Record<string, (...a: Array<string | number>) => Promise<number>>).webhookLeaseAcquire!.bind(redis);
  return {
    async acquire(merchantId) {
      const now = Date.now();
      const token = randomUUID();
      const got = await acquire(key(merchantId), now, now + leaseMs, limit, token, leaseMs * 2);
      return got === 1 ? token : undefined;
    },
    async release(merchantId, token) {
      await redis.zrem(key(merchantId), token);
    },
  };
}
