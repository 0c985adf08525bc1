import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

// A per-merchant semaphore shared by every worker process: a sorted set of leases scored by expiry. A worker that
// dies keeps its lease only until it expires, so a crash never locks a merchant out for good.
//
// Redis is the cross-process truth; each process keeps the leases it was granted for a moment after a delivery
// ends and hands them to its next delivery of the same merchant without a round trip. Every lease a process holds,
// in use or idle, stays a member of the merchant's set, so the set never counts fewer slots than are in use
// anywhere and the limit holds across processes. A lease is reused only while it is younger than `reuseMs`; its
// expiry in Redis is `leaseMs + reuseMs` after the grant, so a delivery that starts on a reused lease still has at
// least `leaseMs` of it. An idle lease goes back to Redis after `idleMs`, so slots a process no longer needs reach
// other processes.

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
  /** Ends a delivery: the lease stays with this process for `idleMs` (reused by its next delivery), then goes back. */
  release(merchantId: string, token: string): void;
  /** Returns every idle lease to Redis (call after the last delivery has released its own). */
  close(): Promise<void>;
}

export interface MerchantLimiterOptions {
  /** Longest a delivery may hold a lease (the attempt's timeout plus a margin). */
  leaseMs: number;
  /** A lease is handed to another delivery only while it is younger than this (0: never reused). */
  reuseMs?: number;
  /** An idle lease goes back to Redis after this long without a delivery of its merchant. */
  idleMs?: number;
}

interface Idle {
  token: string;
  grantedAt: number;
  idleSince: number;
}

interface Slots {
  /** Leases in use by this process: token → when Redis granted it. */
  busy: Map<string, number>;
  /** Leases this process holds with no delivery on them, most recently released last. */
  idle: Idle[];
}

/** `redis` should be a connection of the limiter's own: the script is registered on it (EVALSHA after the first call). */
export function createMerchantLimiter(redis: Redis, keyPrefix: string, limit: number, o: MerchantLimiterOptions): MerchantLimiter {
  const reuseMs = o.reuseMs ?? 5_000;
  const idleMs = o.idleMs ?? 250;
  const expiryMs = o.leaseMs + reuseMs;
  const key = (m: string) => `${keyPrefix}:webhook-inflight:${m}`;
  redis.defineCommand('webhookLeaseAcquire', { numberOfKeys: 1, lua: ACQUIRE });
  const script = (redis as unknown as Record<string, (...a: Array<string | number>) => Promise<number>>).webhookLeaseAcquire!.bind(redis);
  const slots = new Map<string, Slots>();
  const timer: { handle?: NodeJS.Timeout } = {};

  const slotsOf = (m: string): Slots => {
    let s = slots.get(m);
    if (!s) slots.set(m, (s = { busy: new Map(), idle: [] }));
    return s;
  };
  // Commands on one connection run in order, so a lease given back here is gone before any later acquire runs.
  const giveBack = (m: string, tokens: string[]): Promise<unknown> =>
    tokens.length ? redis.zrem(key(m), ...tokens).catch(() => 0) : Promise.resolve();

  const sweep = (all: boolean): Promise<unknown> => {
    timer.handle = undefined;
    const now = Date.now();
    const sent: Array<Promise<unknown>> = [];
    let idleLeft = false;
    for (const [m, s] of slots) {
      const keep = all ? [] : s.idle.filter((l) => now - l.idleSince < idleMs && now - l.grantedAt <= reuseMs);
      if (keep.length < s.idle.length) {
        sent.push(
          giveBack(
            m,
            s.idle.filter((l) => !keep.includes(l)).map((l) => l.token),
          ),
        );
        s.idle = keep;
      }
      if (s.idle.length === 0 && s.busy.size === 0) slots.delete(m);
      idleLeft ||= s.idle.length > 0;
    }
    if (idleLeft && !all) armSweep();
    return Promise.all(sent);
  };
  const armSweep = () => {
    if (timer.handle) return;
    timer.handle = setTimeout(() => void sweep(false), idleMs);
    timer.handle.unref();
  };

  return {
    async acquire(merchantId) {
      const s = slots.get(merchantId);
      const now = Date.now();
      const stale: string[] = [];
      for (let l = s?.idle.pop(); s && l; l = s.idle.pop()) {
        if (now - l.grantedAt <= reuseMs) {
          s.busy.set(l.token, l.grantedAt);
          void giveBack(merchantId, stale);
          return l.token;
        }
        stale.push(l.token);
      }
      void giveBack(merchantId, stale);
      // This process alone already uses every slot of the merchant: Redis would refuse too.
      if (s && s.busy.size >= limit) return undefined;
      const token = randomUUID();
      const got = await script(key(merchantId), now, now + expiryMs, limit, token, expiryMs * 2);
      if (got !== 1) return undefined;
      slotsOf(merchantId).busy.set(token, now);
      return token;
    },
    release(merchantId, token) {
      const s = slots.get(merchantId);
      const grantedAt = s?.busy.get(token);
      if (!s || grantedAt === undefined) return;
      s.busy.delete(token);
      const now = Date.now();
      if (reuseMs > 0 && now - grantedAt <= reuseMs) {
        s.idle.push({ token, grantedAt, idleSince: now });
        armSweep();
      } else void giveBack(merchantId, [token]);
    },
    async close() {
      if (timer.handle) clearTimeout(timer.handle);
      await sweep(true);
    },
  };
}
