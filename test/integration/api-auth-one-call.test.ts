import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_AUTH_REDIS_NAME, buildServer } from '../../src/api/server.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { TEST_MASTER_KEY, testServerDeps } from '../support/api-harness.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis.js';
import { SignedClient } from '../support/signed-client.js';

// The per-key rate limit and the nonce of a signed request in ONE Redis call (docs/performance.md "API auth path").
// A private redis-server (this file flushes its scripts and restarts it), watched two ways, both in execution order:
// MONITOR lists the commands clients sent (a script's own commands are marked "lua" and left out); keyspace
// notifications list the keys actually set (a SET NX that found its key sets nothing). So what one request sent and
// wrote is exact, without timing.

const LIST = '/api/v1/checkout/sessions';

describe('signed request: per-key limit and nonce in one Redis call', () => {
  let r: PrivateRedis;
  let t: TestDatabase;
  let redis: Redis;
  let admin: Redis;
  let events: Redis;
  let monitor: Redis;
  let app: FastifyInstance;
  let shop: SignedClient;
  const prefix = `sp_test_${randomBytes(4).toString('hex')}`;
  const seen: string[] = [];
  const sent: string[] = [];
  /** The client address (ip:port) each top-level command came from, in the same order as `sent`. */
  const sources: string[] = [];
  let marks = 0;

  async function watch(): Promise<void> {
    await admin.config('SET', 'notify-keyspace-events', 'E$');
    events = new Redis(r.url);
    events.on('message', (_channel: string, key: string) => seen.push(key));
    await events.subscribe('__keyevent@0__:set');
    monitor = await admin.monitor();
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source !== 'lua') {
        sent.push(`${String(args[0]).toLowerCase()} ${args[1] ?? ''}`);
        sources.push(source);
      }
    });
  }

  /**
   * What `f` made the server send and write: top-level commands (names, lower case) and the keys set. A marker key
   * set afterwards closes both lists.
   */
  const HANDSHAKE = new Set(['hello', 'info', 'client', 'select', 'ping', 'auth', 'readonly']);
  async function observe<T>(f: () => Promise<T>): Promise<{ result: T; keys: string[]; commands: string[] }> {
    seen.length = 0;
    sent.length = 0;
    sources.length = 0;
    const result = await f();
    const marker = `mark:${marks++}`;
    await admin.set(marker, '1');
    for (const end = Date.now() + 30_000; !(seen.includes(marker) && sent.includes(`set ${marker}`)) && Date.now() < end; ) {
      await new Promise((ok) => setTimeout(ok, 5));
    }
    expect(seen).toContain(marker);
    expect(sent).toContain(`set ${marker}`);
    return {
      result,
      keys: seen.slice(0, seen.indexOf(marker)),
      // A client's connection handshake (after a restart: HELLO, INFO, CLIENT SETNAME…) is not the request's work.
      commands: sent
        .slice(0, sent.indexOf(`set ${marker}`))
        .map((c) => c.split(' ')[0]!)
        .filter((c) => !HANDSHAKE.has(c)),
    };
  }

  beforeAll(async () => {
    r = await startPrivateRedis();
    t = await createTestDatabase();
    redis = new Redis(r.url, { maxRetriesPerRequest: 20 });
    admin = new Redis(r.url, { maxRetriesPerRequest: 20 });
    await watch();
    const box = new SecretBox(TEST_MASTER_KEY);
    app = await buildServer({
      ...testServerDeps({ db: t.db, redis, box, redisPrefix: prefix }),
      rateLimits: { perKeyPerSecond: 1, perIpPerSecond: 0, authFailuresPerIpPerMinute: 0 },
    });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const m = await createMerchant(t.db, box, { name: 'one call' });
    shop = new SignedClient(url, { key: m.testKey.key, secret: m.testKey.secret });
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    redis?.disconnect();
    admin?.disconnect();
    events?.disconnect();
    monitor?.disconnect();
    await t?.destroy();
    await r?.stop();
  });

  const bucketKeys = (keys: string[]) => keys.filter((k) => k.startsWith(`${prefix}:rl:key:`));
  const nonceKeys = (keys: string[], nonce?: string) =>
    keys.filter((k) => k.startsWith(`${prefix}:nonce:`) && (nonce === undefined || k.endsWith(`:${nonce}`)));
  const fullBucket = () => new Promise((ok) => setTimeout(ok, 1100));

  it('sends it on the API connection of its own (auto-pipelined, named in CLIENT LIST), not on the shared one', async () => {
    await fullBucket();
    expect((await shop.get(LIST)).status).toBe(200);
    await fullBucket();
    const { result } = await observe(() => shop.get(LIST));
    expect(result.status).toBe(200);
    const evalFrom = sources.filter((_, i) => sent[i]!.startsWith('evalsha '));
    expect(evalFrom).toHaveLength(1);
    const clients = String(await admin.client('LIST'))
      .trim()
      .split('\n')
      .map((line) => Object.fromEntries(line.split(' ').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])));
    const own = clients.filter((c) => c.name === API_AUTH_REDIS_NAME);
    expect(own).toHaveLength(1);
    expect(evalFrom[0]).toBe(own[0]!.addr);
    const shared = String(await redis.client('INFO'));
    expect(shared).not.toContain(`addr=${own[0]!.addr} `);
  });

  it('sends exactly one Redis command for an authenticated request, which counts it and stores its nonce', async () => {
    await fullBucket();
    expect((await shop.get(LIST)).status).toBe(200); // loads the script
    await fullBucket();
    const nonce = randomUUID();
    const { result, keys, commands } = await observe(() => shop.get(LIST, { nonce }));
    expect(result.status).toBe(200);
    expect(result.headers.get('ratelimit-limit')).toBe('1');
    expect(commands).toEqual(['evalsha']);
    expect(bucketKeys(keys)).toHaveLength(1);
    expect(nonceKeys(keys, nonce)).toHaveLength(1);
  });

  it('refuses a replayed nonce with nonce_reused, and the replay has used the key budget (counted first, as before)', async () => {
    await fullBucket();
    const nonce = randomUUID();
    const timestamp = Math.floor(Date.now() / 1000);
    expect((await shop.get(LIST, { nonce, timestamp })).status).toBe(200);
    await fullBucket();
    const { result, keys, commands } = await observe(() => shop.get(LIST, { nonce, timestamp }));
    expect(result.status).toBe(401);
    expect(result.json.error.code).toBe('nonce_reused');
    expect(commands).toEqual(['evalsha']);
    expect(bucketKeys(keys)).toHaveLength(1); // counted in the key's bucket
    expect(nonceKeys(keys)).toEqual([]); // SET NX found the nonce: nothing written
  });

  it('refuses a request over the limit with 429 and its headers; it counts nothing and leaves its nonce unused', async () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      await fullBucket();
      const nonces = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
      const { result, keys } = await observe(() => Promise.all(nonces.map((nonce) => shop.get(LIST, { nonce }))));
      const i = result.findIndex((x) => x.status === 429);
      if (i < 0) continue; // so slow a machine that each request found a refilled bucket: another burst
      const refused = result[i]!;
      expect(refused.json.error.code).toBe('rate_limit_exceeded');
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.headers.get('ratelimit-limit')).toBe('1');
      expect(refused.headers.get('ratelimit-remaining')).toBe('0');
      expect(nonceKeys(keys, nonces[i])).toEqual([]);
      // Every served request counted once and stored its nonce; refused ones did neither.
      const served = result.filter((x) => x.status === 200).length;
      expect(served + result.filter((x) => x.status === 429).length).toBe(4);
      expect(bucketKeys(keys)).toHaveLength(served);
      expect(nonceKeys(keys)).toHaveLength(served);
      // The refused request, sent again once the bucket has room, is served: its nonce was never consumed.
      await fullBucket();
      expect((await shop.get(LIST, { nonce: nonces[i] })).status).toBe(200);
      return;
    }
    throw new Error('no request was refused in 5 bursts of 4 at 1 request per second');
  });

  it('recovers from a flushed script cache (NOSCRIPT, then EVAL) and from a restarted Redis; nonces stay one-time', async () => {
    await fullBucket();
    expect((await shop.get(LIST)).status).toBe(200);
    await admin.script('FLUSH');
    await fullBucket();
    const nonce = randomUUID();
    const timestamp = Math.floor(Date.now() / 1000);
    const first = await observe(() => shop.get(LIST, { nonce, timestamp }));
    expect(first.result.status).toBe(200);
    expect(first.commands).toEqual(['evalsha', 'eval']); // NOSCRIPT, then EVAL, which loads the script again
    expect(nonceKeys(first.keys, nonce)).toHaveLength(1);
    await fullBucket();
    expect((await observe(() => shop.get(LIST))).commands).toEqual(['evalsha']);
    await fullBucket();
    const replay = await shop.get(LIST, { nonce, timestamp });
    expect(replay.status).toBe(401);
    expect(replay.json.error.code).toBe('nonce_reused');

    // A restarted Redis has neither scripts nor keys: the request is served once the client has reconnected.
    // Every client that reconnects is past its handshake before MONITOR starts: a handshake line arriving in the same read
    // as MONITOR's +OK reaches ioredis before it switched that connection to monitoring ("Command queue state error").
    // Judged per client, not by counting connections: the restart's own readiness probe is a connection that comes and goes.
    const settled = async () => {
      const lines = String(await admin.client('LIST'))
        .split('\n')
        .filter((l) => l.trim() !== '');
      const auth = lines.find((l) => l.includes(` name=${API_AUTH_REDIS_NAME} `));
      // The API's own connection names itself (CLIENT SETNAME), then runs its ready check (INFO): past both, it is ready.
      const authReady = auth !== undefined && !/ cmd=(NULL|client\|setname) /.test(auth);
      return redis.status === 'ready' && authReady && !lines.some((l) => l.includes(' cmd=NULL '));
    };
    events.disconnect();
    monitor.disconnect();
    await r.restart();
    for (const end = Date.now() + 30_000; !(await settled()) && Date.now() < end; ) await new Promise((ok) => setTimeout(ok, 50));
    expect(await settled()).toBe(true);
    await watch();
    const again = await observe(() => shop.get(LIST));
    expect(again.result.status).toBe(200);
    expect(again.commands).toEqual(['evalsha', 'eval']);
    expect(bucketKeys(again.keys)).toHaveLength(1);
    expect(nonceKeys(again.keys)).toHaveLength(1);
    expect(again.result.headers.get('ratelimit-limit')).toBe('1');
  });
});
