import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startSimRedis } from '../../scripts/sim/env/redis.js';

// The simulator's private redis-server (scripts/sim/env/redis.ts) under overlapping restart faults, as seed 106 draws
// them (a second restart starting while the first is still down): the second crash does nothing, the later start
// finds it up, and one server is left, reachable, and stopped by stop(). Before, the second crash waited forever for
// the 'exit' of a process that had already exited, and the whole seed hung.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('simulator redis restarts', () => {
  it('overlapping restart faults merge: both complete and the server answers afterwards', async () => {
    const r = await startSimRedis();
    try {
      const first = (async () => {
        await r.crash();
        await sleep(400);
        await r.start();
      })();
      await sleep(100);
      const second = (async () => {
        await r.crash();
        await sleep(900);
        await r.start();
      })();
      await Promise.all([first, second]);
      const c = new Redis(r.url, { maxRetriesPerRequest: 1 });
      try {
        expect(await c.ping()).toBe('PONG');
      } finally {
        c.disconnect();
      }
    } finally {
      await r.stop();
    }
  }, 60_000);
});
