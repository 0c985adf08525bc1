import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { ChainRegistry } from '../../chains/chain-registry.js';
import type { ConsoleActor } from '../../src/console/actor.js';
import type { ConsoleDeps } from '../../src/console/deps.js';
import { consoleErrorHandler } from '../../src/console/errors.js';
import { registerConsoleResources } from '../../src/console/routes/index.js';
import { createRateLimiter } from '../../src/api/rate-limit.js';
import { systemClock } from '../../src/domain/clock.js';
import { createLogger } from '../../src/logger.js';
import { createApiKey, createMerchant } from '../../src/ledger/merchants/merchants.js';
import type { OperationsContext } from '../../src/operations/context.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { TEST_MASTER_KEY } from './api-harness.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { REDIS_URL } from './env.js';
import { assertConsoleResponse, consoleDocumentChecker } from './console-openapi-check.js';

// The console's resource routes over a fresh database and real Redis, without the sign-in: each request names its
// actor in the test-only header `x-test-actor` (this harness's own hook, never in src/). Sign-in, sessions and CSRF
// issuance are tested on the whole console (test/e2e/console-*.test.ts); here a mutation sends the actor's token.

export interface ConsoleHarness {
  t: TestDatabase;
  ops: OperationsContext;
  app: FastifyInstance;
  /** Enqueued payouts, in order. */
  enqueued: string[];
  operator: ConsoleActor;
  merchantUser(merchantId: string): ConsoleActor;
  merchant(name?: string): Promise<{ merchantId: string; testKey: { key: string; secret: string } }>;
  /** A request as `actor` (JSON in and out); mutations carry the actor's CSRF token unless `csrf` is given. */
  call(
    actor: ConsoleActor | null,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    body?: unknown,
    o?: { csrf?: string },
  ): Promise<{ status: number; json: any; headers: Record<string, unknown> }>;
  close(): Promise<void>;
}

export async function startConsoleHarness(o: { chains?: ChainRegistry } = {}): Promise<ConsoleHarness> {
  const t = await createTestDatabase();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  const box = new SecretBox(TEST_MASTER_KEY);
  const redisPrefix = `sp_ctest_${randomBytes(4).toString('hex')}`;
  const enqueued: string[] = [];
  const ops: OperationsContext = {
    db: t.db,
    box,
    redis,
    redisPrefix,
    chains: o.chains ?? new ChainRegistry([]),
    clock: systemClock,
    log: createLogger('silent'),
    enqueuePayout: async (id) => {
      enqueued.push(id);
    },
    checkoutBaseUrl: 'http://checkout.test/pay',
    env: {},
  };
  const deps: ConsoleDeps = {
    ops,
    settings: {
      secureCookies: false,
      idleTimeoutMs: 30 * 60_000,
      absoluteTimeoutMs: 12 * 3600_000,
      loginFailuresPerAccount: 5,
      loginFailuresPerIp: 20,
      demo: false,
      uiDir: null,
      liveIntervalMs: 200,
    },
    limiter: createRateLimiter({ redis, prefix: redisPrefix }),
    docsUrl: 'https://docs.test/errors',
  };
  const actors = new Map<string, ConsoleActor>();
  const actor = (role: 'operator' | 'merchant', merchantId: string | null): ConsoleActor => {
    const a: ConsoleActor = {
      userId: `cu_${randomBytes(12).toString('hex').slice(0, 24)}`,
      email: `${role}-${randomBytes(3).toString('hex')}@console.test`,
      role,
      merchantId,
      sessionIdHash: randomBytes(32).toString('hex'),
      csrfToken: randomBytes(16).toString('hex'),
      ip: '127.0.0.1',
    };
    actors.set(a.userId, a);
    return a;
  };
  const app = Fastify({ logger: false });
  await app.register(
    async (api) => {
      api.setErrorHandler(consoleErrorHandler(deps.docsUrl));
      api.addHook('onRequest', async (req) => {
        const id = req.headers['x-test-actor'];
        if (typeof id === 'string') req.consoleActor = actors.get(id);
      });
      await registerConsoleResources(api, deps);
    },
    { prefix: '/api' },
  );
  await app.ready();
  const checker = await consoleDocumentChecker('/api');
  const operator = actor('operator', null);
  return {
    t,
    ops,
    app,
    enqueued,
    operator,
    merchantUser: (merchantId) => actor('merchant', merchantId),
    async merchant(name = 'Console shop') {
      const m = await createMerchant(t.db, box, { name });
      return { merchantId: m.merchantId, testKey: { key: m.testKey.key, secret: m.testKey.secret } };
    },
    async call(a, method, url, body, opt = {}) {
      const headers: Record<string, string> = {};
      if (a) headers['x-test-actor'] = a.userId;
      if (method !== 'GET' && a) headers['x-csrf-token'] = opt.csrf ?? a.csrfToken;
      const r = await app.inject({
        method,
        url,
        headers,
        ...(body !== undefined ? { payload: body as object } : {}),
      });
      assertConsoleResponse(checker, method, url, r.statusCode, (r.headers['content-type'] as string | undefined) ?? null, r.body);
      let json: any;
      try {
        json = r.json();
      } catch {
        json = r.body;
      }
      return { status: r.statusCode, json, headers: r.headers };
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

export { createApiKey };
