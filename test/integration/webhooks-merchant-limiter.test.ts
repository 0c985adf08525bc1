import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchantLimiter, type MerchantLimiter } from '../../src/webhooks/merchant-limiter.js';
import { REDIS_URL } from '../support/env.js';

// The per-merchant lease set against real Redis, with two limiters on connections of their own standing for two
// worker processes. A process reuses a lease it holds for its next delivery of the same merchant (issue 22: no round
// trip to give it back and take it again); every lease it holds stays in Redis, so the limit holds across processes.

const prefix = `whlim_${randomBytes(5).toString('hex')}`;
const conns: Redis[] = [];
const key = (m: string) => `${prefix}:webhook-inflight:${m}`;
let admin: Redis;

function limiter(limit: number, o: { reuseMs?: number; idleMs?: number } = {}): { l: MerchantLimiter; commands: () => number } {
  const c = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  conns.push(c);
  let n = 0;
  const send = c.sendCommand.bind(c);
  const seen = new WeakSet<object>();
  c.sendCommand = ((cmd: object, ...rest: unknown[]) => {
    if (!seen.has(cmd)) {
      seen.add(cmd);
      n++;
    }
    return (send as (...a: unknown[]) => unknown)(cmd, ...rest);
  }) as typeof c.sendCommand;
  return { l: createMerchantLimiter(c, prefix, limit, { leaseMs: 30_000, ...o }), commands: () => n };
}

beforeAll(() => {
  admin = new Redis(REDIS_URL);
});
afterAll(async () => {
  for (const c of conns) c.disconnect();
  const keys = await admin.keys(`${prefix}:*`);
  if (keys.length) await admin.del(...keys);
  admin.disconnect();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('per-merchant lease reuse', () => {
  it('hands a released lease to the next delivery of the same merchant without a Redis call', async () => {
    const { l, commands } = limiter(2, { idleMs: 10_000 });
    const a = await l.acquire('m_reuse');
    expect(a).toBeDefined();
    const afterFirst = commands();
    l.release('m_reuse', a!);
    const b = await l.acquire('m_reuse');
    expect(b).toBe(a);
    expect(commands()).toBe(afterFirst);
    // Still one member in Redis: the lease was never given back.
    expect(await admin.zcard(key('m_reuse'))).toBe(1);
    l.release('m_reuse', b!);
    await l.close();
    expect(await admin.zcard(key('m_reuse'))).toBe(0);
  });

  it('never lets two processes together exceed the limit, idle leases included', async () => {
    const p1 = limiter(3, { idleMs: 10_000 });
    const p2 = limiter(3, { idleMs: 10_000 });
    const m = 'm_shared';
    const held1 = [await p1.l.acquire(m), await p1.l.acquire(m)];
    expect(held1.every((t) => t !== undefined)).toBe(true);
    // p1 releases one: it stays p1's (idle) and counts against the limit, so p2 gets exactly one slot.
    p1.l.release(m, held1[1]!);
    const p2a = await p2.l.acquire(m);
    const p2b = await p2.l.acquire(m);
    expect(p2a).toBeDefined();
    expect(p2b).toBeUndefined();
    expect(await admin.zcard(key(m))).toBe(3);
    // p1 takes its idle lease back; a fourth acquire anywhere is refused, by p1 locally or by Redis for p2.
    expect(await p1.l.acquire(m)).toBe(held1[1]);
    expect(await p1.l.acquire(m)).toBeUndefined();
    expect(await p2.l.acquire(m)).toBeUndefined();
    p1.l.release(m, held1[0]!);
    p1.l.release(m, held1[1]!);
    p2.l.release(m, p2a!);
    await p1.l.close();
    await p2.l.close();
    expect(await admin.zcard(key(m))).toBe(0);
  });

  it('gives an idle lease back to Redis after idleMs, so another process can take the slot', async () => {
    const p1 = limiter(1, { idleMs: 30 });
    const p2 = limiter(1, { idleMs: 30 });
    const m = 'm_idle';
    const t = await p1.l.acquire(m);
    p1.l.release(m, t!);
    expect(await p2.l.acquire(m)).toBeUndefined();
    let got: string | undefined;
    for (let i = 0; i < 200 && !got; i++) {
      await sleep(10);
      got = await p2.l.acquire(m);
    }
    expect(got).toBeDefined();
    expect(got).not.toBe(t);
    p2.l.release(m, got!);
    await p1.l.close();
    await p2.l.close();
  });

  it('does not reuse a lease older than reuseMs: it is given back and a fresh one is granted', async () => {
    const { l } = limiter(1, { reuseMs: 20, idleMs: 10_000 });
    const m = 'm_old';
    const t = await l.acquire(m);
    l.release(m, t!);
    await sleep(40);
    const u = await l.acquire(m);
    expect(u).toBeDefined();
    expect(u).not.toBe(t);
    expect(await admin.zrange(key(m), '0', '-1')).toEqual([u]);
    // Its expiry in Redis leaves a delivery on it the whole leaseMs (30 s) even at the end of reuseMs.
    const score = Number((await admin.zscore(key(m), u!))!);
    expect(score - Date.now()).toBeGreaterThan(30_000 - 1_000);
    l.release(m, u!);
    await l.close();
  });

  it('many concurrent deliveries in two processes: never more than the limit in flight, every lease returned', async () => {
    const limit = 4;
    const ps = [limiter(limit, { idleMs: 5 }), limiter(limit, { idleMs: 5 })];
    const m = 'm_storm';
    let inFlight = 0;
    let peak = 0;
    let done = 0;
    const one = async (p: MerchantLimiter) => {
      for (;;) {
        const t = await p.acquire(m);
        if (!t) {
          await sleep(1);
          continue;
        }
        inFlight++;
        peak = Math.max(peak, inFlight);
        await sleep(Math.random() * 3);
        inFlight--;
        p.release(m, t);
        done++;
        return;
      }
    };
    await Promise.all(Array.from({ length: 200 }, (_, i) => one(ps[i % 2]!.l)));
    expect(done).toBe(200);
    expect(peak).toBeLessThanOrEqual(limit);
    expect(peak).toBeGreaterThan(1);
    for (const p of ps) await p.l.close();
    expect(await admin.zcard(key(m))).toBe(0);
  });
});
