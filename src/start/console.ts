import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { KeyDeriver, TxSigner } from '../../chains/types.js';
import { createNativePriceService, nativePriceConfigFrom } from '../rates/native-prices.js';
import { createRateLimiter } from '../api/rate-limit.js';
import type { Config } from '../config.js';
import type { ConsoleDeps } from '../console/deps.js';
import { registerConsole } from '../console/plugin.js';
import { buildConsoleServer } from '../console/server.js';
import type { ConsoleSettings } from '../console/settings.js';
import type { Db } from '../db/database.js';
import type { ReadDb } from '../db/read-db.js';
import { systemClock, type Clock } from '../domain/clock.js';
import type { Logger } from '../logger.js';
import type { OperationsContext } from '../operations/context.js';
import type { SecretBox } from '../security/secret-box.js';

// Assembling the console for a process: its settings from the configuration, the application layer's context, and
// either its own listener (the `console` role) or a plugin for the public listener (CONSOLE_PATH).

export function consoleSettingsFrom(config: Config): ConsoleSettings {
  return {
    secureCookies: config.CONSOLE_SECURE_COOKIES,
    idleTimeoutMs: config.CONSOLE_IDLE_TIMEOUT_MINUTES * 60_000,
    absoluteTimeoutMs: config.CONSOLE_ABSOLUTE_TIMEOUT_HOURS * 3_600_000,
    loginFailuresPerAccount: config.CONSOLE_LOGIN_FAILURES_PER_ACCOUNT,
    loginFailuresPerIp: config.CONSOLE_LOGIN_FAILURES_PER_IP,
    liveIntervalMs: config.CONSOLE_LIVE_INTERVAL_MS,
    demo: config.CONSOLE_DEMO,
    uiDir: config.CONSOLE_UI_DIR ?? builtUiDir(),
  };
}

/** dist/console-ui beside the code: from src/start/ (tsx) or dist/src/start/ (the compiled build). */
export function builtUiDir(): string | null {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [resolve(here, '../../dist/console-ui'), resolve(here, '../../console-ui')]) {
    if (existsSync(join(candidate, 'index.html'))) return candidate;
  }
  return null;
}

export interface ConsoleParts {
  config: Config;
  db: Db;
  /** Reporting reads (lists, search, exports): the read replica when READ_DATABASE_URL is set. */
  reads?: ReadDb;
  redis: Redis;
  box: SecretBox;
  chains: ChainRegistry;
  log: Logger;
  enqueuePayout(refundId: string): Promise<void>;
  env: Record<string, string | undefined>;
  clock?: Clock;
  /** The HD keys (deposit and operator addresses) and, where this process holds the seed, the signer of sweeps. */
  keys: KeyDeriver | null;
  signer: TxSigner | null;
}

export function consoleDeps(p: ConsoleParts): ConsoleDeps {
  const ops: OperationsContext = {
    db: p.db,
    reads: p.reads,
    box: p.box,
    redis: p.redis,
    redisPrefix: p.config.REDIS_KEY_PREFIX,
    chains: p.chains,
    clock: p.clock ?? systemClock,
    log: p.log,
    enqueuePayout: p.enqueuePayout,
    checkoutBaseUrl: p.config.checkoutBaseUrl,
    env: p.env,
    keys: p.keys,
    treasury: {
      keys: p.keys,
      signer: p.signer,
      prices: once(() => createNativePriceService(nativePriceConfigFrom(p.config))),
      engine: {
        pollMs: p.config.PAYOUT_POLL_MS,
        stuckAfterMs: p.config.PAYOUT_STUCK_AFTER_MS,
        feeBumpPercent: p.config.PAYOUT_FEE_BUMP_PERCENT,
      },
    },
  };
  return {
    ops,
    settings: consoleSettingsFrom(p.config),
    limiter: createRateLimiter({
      redis: p.redis,
      prefix: p.config.REDIS_KEY_PREFIX,
      onFailOpen: (err) => p.log.warn({ err }, 'console rate limit check failed: Redis did not answer, let through'),
    }),
    docsUrl: p.config.docsUrl,
  };
}

function once<T>(f: () => T): () => T {
  let v: { value: T } | undefined;
  return () => (v ??= { value: f() }).value;
}

/** The console's own listener (the `console` role). */
export async function startConsoleListener(p: ConsoleParts): Promise<{ app: FastifyInstance; port: number | undefined }> {
  const app = await buildConsoleServer(consoleDeps(p), {
    logLevel: p.config.LOG_LEVEL,
    trustProxy: p.config.TRUST_PROXY,
    requestTimeoutMs: p.config.HTTP_REQUEST_TIMEOUT_MS,
    shutdownGraceMs: p.config.SHUTDOWN_GRACE_MS,
  });
  await app.listen({ host: p.config.CONSOLE_HOST, port: p.config.CONSOLE_PORT });
  const address = app.server.address();
  return { app, port: typeof address === 'object' && address ? address.port : undefined };
}

/** The console under CONSOLE_PATH of the public listener. */
export function consolePlugin(p: ConsoleParts): (app: FastifyInstance) => Promise<void> {
  return (app) => registerConsole(app, consoleDeps(p), p.config.CONSOLE_PATH ?? '');
}
