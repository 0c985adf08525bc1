import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { buildServer, type ServerDeps } from '../../src/api/server.js';
import { createApiKey, createMerchant } from '../../src/ledger/merchants/merchants.js';
import { createRateService } from '../../src/rates/index.js';
import { SecretBox } from '../../src/security/secret-box.js';
import type { Mode } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { REDIS_URL } from './env.js';
import { SignedClient } from './signed-client.js';

export const TEST_MASTER_KEY = '5a'.repeat(32);
export const CHECKOUT_BASE = 'http://checkout.test/pay';

/** A real server on 127.0.0.1 over a fresh database and its own Redis key prefix. */
export interface ApiHarness {
  t: TestDatabase;
  redis: Redis;
  box: SecretBox;
  app: FastifyInstance;
  baseUrl: string;
  redisPrefix: string;
  merchant(name?: string): Promise<{ merchantId: string; test: SignedClient; live(): Promise<SignedClient> }>;
  close(): Promise<void>;
}

/** The API server's settings in tests, on a given database, Redis and prefix (a second server shares them). */
export function testServerDeps(on: Pick<ServerDeps, 'db' | 'redis' | 'box' | 'redisPrefix'>): ServerDeps {
  return {
    ...on,
    rates: createRateService({ sources: ['peg'], timeoutMs: 1000, cacheTtlMs: 1000 }),
    checkoutBaseUrl: CHECKOUT_BASE,
    docsUrl: 'https://docs.test/errors',
    authWindowSeconds: 300,
    maxBodyBytes: 65_536,
    sessionLifetimeSeconds: 1800,
    logLevel: 'silent',
    keyCacheMs: 500,
  };
}

/** `overrides` may be a function of the fresh database (plugins that need it, such as the checkout page). */
export async function startApiHarness(
  overrides: Partial<ServerDeps> | ((t: TestDatabase) => Partial<ServerDeps>) = {},
): Promise<ApiHarness> {
  const t = await createTestDatabase();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  const box = new SecretBox(TEST_MASTER_KEY);
  const redisPrefix = `sp_test_${randomBytes(4).toString('hex')}`;
  const app = await buildServer({
    ...testServerDeps({ db: t.db, redis, box, redisPrefix }),
    ...(typeof overrides === 'function' ? overrides(t) : overrides),
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    t,
    redis,
    box,
    app,
    baseUrl: address,
    redisPrefix,
    async merchant(name = 'Test shop') {
      const m = await createMerchant(t.db, box, { name });
      const test = new SignedClient(address, { key: m.testKey.key, secret: m.testKey.secret });
      return {
        merchantId: m.merchantId,
        test,
        live: async () => {
          const k = await createApiKey(t.db, box, m.merchantId, 'live' as Mode);
          return new SignedClient(address, { key: k.key, secret: k.secret });
        },
      };
    },
    async close() {
      await app.close();
      const keys = await redis.keys(`${redisPrefix}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
      await t.destroy();
    },
  };
}
