import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { Secret, TOTP } from 'otpauth';
import { ChainRegistry } from '../../chains/chain-registry.js';
import { createRateLimiter } from '../../src/api/rate-limit.js';
import type { ConsoleDeps } from '../../src/console/deps.js';
import { registerConsole } from '../../src/console/plugin.js';
import type { ConsoleSettings } from '../../src/console/settings.js';
import { systemClock } from '../../src/domain/clock.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { createLogger } from '../../src/logger.js';
import type { OperationsContext } from '../../src/operations/context.js';
import { createConsoleUser } from '../../src/operations/console-users.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { TEST_MASTER_KEY } from './api-harness.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { REDIS_URL } from './env.js';
import { assertConsoleResponse, consoleDocumentChecker } from './console-openapi-check.js';

// The whole console (registerConsole from src/console/plugin.ts, under /console) over a fresh database and real Redis,
// for the sign-in, users and audit tests: real cookies, CSRF tokens, TOTP codes made with otpauth.

export const BASE = '/console';

export interface Reply {
  status: number;
  json: any;
  headers: Record<string, unknown>;
  /** The sp_console value of a Set-Cookie, if any. */
  cookie?: string;
  setCookie?: string;
}

export interface Signed {
  cookie: string;
  csrf: string;
}

export interface ConsoleApp {
  t: TestDatabase;
  ops: OperationsContext;
  app: FastifyInstance;
  settings: ConsoleSettings;
  /** Every route the instance registered (Fastify's onRoute, HEAD twins left out): method and full URL. */
  routes: Array<{ method: string; url: string }>;
  call(method: 'GET' | 'POST', url: string, o?: { body?: unknown; cookie?: string; csrf?: string; ip?: string }): Promise<Reply>;
  /** A user made as the CLI does; its temporary password. */
  /** A user created as the CLI does; its temporary password already changed unless `firstSignIn`. */
  user(
    role: 'operator' | 'merchant',
    merchantId?: string,
    o?: { firstSignIn?: boolean },
  ): Promise<{ id: string; email: string; password: string }>;
  merchant(): Promise<string>;
  login(email: string, password: string, extra?: Record<string, string>, o?: { cookie?: string; ip?: string }): Promise<Reply>;
  /** Turns TOTP on for a signed-in user; its secret and recovery codes. */
  enroll(s: Signed): Promise<{ secret: string; recoveryCodes: string[] }>;
  /** An operator with TOTP, signed in. */
  operator(): Promise<Signed & { id: string; email: string; password: string; secret: string }>;
  close(): Promise<void>;
}

/** The TOTP code of `secret`, `steps` periods from now. */
export function totpCode(secret: string, steps = 0): string {
  const totp = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) });
  return totp.generate({ timestamp: Date.now() + steps * 30_000 });
}

export async function startConsoleApp(over: Partial<ConsoleSettings> = {}): Promise<ConsoleApp> {
  const t = await createTestDatabase();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  const box = new SecretBox(TEST_MASTER_KEY);
  const redisPrefix = `sp_cauth_${randomBytes(4).toString('hex')}`;
  const ops: OperationsContext = {
    db: t.db,
    box,
    redis,
    redisPrefix,
    chains: new ChainRegistry([]),
    clock: systemClock,
    log: createLogger('silent'),
    enqueuePayout: async () => {},
    checkoutBaseUrl: 'http://checkout.test/pay',
    env: {},
  };
  const settings: ConsoleSettings = {
    secureCookies: true,
    idleTimeoutMs: 30 * 60_000,
    absoluteTimeoutMs: 12 * 3600_000,
    loginFailuresPerAccount: 5,
    loginFailuresPerIp: 8,
    demo: false,
    uiDir: null,
    liveIntervalMs: 200,
    ...over,
  };
  const deps: ConsoleDeps = {
    ops,
    settings,
    limiter: createRateLimiter({ redis, prefix: redisPrefix }),
    docsUrl: 'https://docs.test/errors',
  };
  const app = Fastify({ logger: false });
  const routes: Array<{ method: string; url: string }> = [];
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) if (method !== 'HEAD') routes.push({ method, url: r.url });
  });
  await registerConsole(app, deps, BASE);
  await app.ready();
  const checker = await consoleDocumentChecker(`${BASE}/api`);
  let n = 0;

  const call: ConsoleApp['call'] = async (method, url, o = {}) => {
    const headers: Record<string, string> = {};
    if (o.cookie !== undefined) headers.cookie = `sp_console=${o.cookie}`;
    if (o.csrf !== undefined) headers['x-csrf-token'] = o.csrf;
    const r = await app.inject({
      method,
      url: `${BASE}/api${url}`,
      headers,
      remoteAddress: o.ip ?? '127.0.0.1',
      ...(o.body !== undefined ? { payload: o.body as object } : {}),
    });
    assertConsoleResponse(
      checker,
      method,
      `${BASE}/api${url}`,
      r.statusCode,
      (r.headers['content-type'] as string | undefined) ?? null,
      r.body,
    );
    let json: any;
    try {
      json = r.json();
    } catch {
      json = r.body;
    }
    const raw = r.headers['set-cookie'];
    const setCookie = Array.isArray(raw) ? raw[0] : (raw as string | undefined);
    const cookie = setCookie ? /^sp_console=([^;]*)/.exec(setCookie)?.[1] : undefined;
    return { status: r.statusCode, json, headers: r.headers, ...(cookie ? { cookie } : {}), ...(setCookie ? { setCookie } : {}) };
  };

  const self: ConsoleApp = {
    t,
    ops,
    app,
    settings,
    routes,
    call,
    async merchant() {
      return (await createMerchant(t.db, box, { name: `Shop ${++n}` })).merchantId;
    },
    async user(role, merchantId, o = {}) {
      const email = `${role}-${randomBytes(4).toString('hex')}@Console.Test`;
      const r = await createConsoleUser({ db: t.db }, { kind: 'cli', id: 'test' }, { email, role, merchantId: merchantId ?? null });
      // A returning user (its temporary password changed), unless the test is about the first sign-in.
      if (!o.firstSignIn)
        await t.db.updateTable('console_users').set({ must_change_password: false }).where('id', '=', r.user.id).execute();
      return { id: r.user.id, email, password: r.password };
    },
    login(email, password, extra = {}, o = {}) {
      return call('POST', '/auth/login', { body: { email, password, ...extra }, ...o });
    },
    async enroll(s) {
      const setup = await call('POST', '/auth/totp/setup', s);
      if (setup.status !== 200) throw new Error(`setup: ${setup.status} ${JSON.stringify(setup.json)}`);
      const confirm = await call('POST', '/auth/totp/confirm', { ...s, body: { code: totpCode(setup.json.secret) } });
      if (confirm.status !== 200) throw new Error(`confirm: ${confirm.status} ${JSON.stringify(confirm.json)}`);
      return { secret: setup.json.secret, recoveryCodes: confirm.json.recovery_codes };
    },
    async operator() {
      const u = await self.user('operator');
      const l = await self.login(u.email, u.password);
      if (l.status !== 200 || !l.cookie) throw new Error(`login: ${l.status}`);
      const s = { cookie: l.cookie, csrf: l.json.csrf_token as string };
      const { secret } = await self.enroll(s);
      return { ...u, ...s, secret };
    },
    async close() {
      await app.close();
      const keys = await redis.keys(`${redisPrefix}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
      await t.destroy();
    },
  };
  return self;
}
