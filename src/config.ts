import { existsSync } from 'node:fs';
import { z } from 'zod';
import { retentionEnvSchema } from './jobs/retention-settings.js';
import { webhookEnvSchema } from './webhooks/config.js';

// Configuration from the environment, validated once at start-up. Every message names the variable.
// Secrets (MASTER_KEY, MNEMONIC) come only from the environment (or a local .env file that git ignores).

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const url = z.string().url();
// false (the socket address), true (every X-Forwarded-For hop), a hop count, or proxy addresses/CIDRs, comma separated.
const trustProxy = z.string().transform((s, ctx): boolean | number | string[] => {
  if (s === 'true' || s === 'false') return s === 'true';
  if (/^\d{1,2}$/.test(s)) return Number(s);
  const list = s
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (list.length > 0 && list.every((p) => /^[0-9A-Fa-f:.]+(?:\/\d{1,3})?$/.test(p))) return list;
  ctx.addIssue({ code: 'custom', message: 'must be true, false, a hop count, or proxy addresses/CIDRs, comma separated' });
  return z.NEVER;
});

export const configSchema = z
  .object({
    HOST: z.string().default('0.0.0.0'),
    PORT: int(0, 65535).default(3000),
    DATABASE_URL: url.default('postgres://postgres@127.0.0.1:5432/stablepay'),
    DATABASE_POOL_SIZE: int(1, 200).default(10),
    // PgBouncer (docs/deploy.md "Connection budget"): `transaction` when DATABASE_URL is a bouncer in transaction
    // pooling; what holds session state (migrations' and reconcile's advisory locks, the watchers' leader locks, the
    // outbox relay's LISTEN) then uses DATABASE_DIRECT_URL, a direct connection to PostgreSQL.
    DATABASE_POOL_MODE: z.enum(['direct', 'transaction']).default('direct'),
    DATABASE_DIRECT_URL: url.optional(),
    // The API's hot statements as named prepared statements (src/db/named-statements.ts), in direct pool mode only;
    // false for a proxy or pooler in front of PostgreSQL that cannot keep a statement's name on one server connection.
    DATABASE_NAMED_STATEMENTS: bool.default(true),
    // Reporting reads (docs/deploy.md "Read replica"): exports and the console's lists read this streaming replica,
    // unless it lags more than READ_REPLICA_MAX_LAG_MS behind the primary or is down. Unset: the primary.
    READ_DATABASE_URL: url.optional(),
    READ_DATABASE_POOL_SIZE: int(1, 200).default(5),
    READ_REPLICA_MAX_LAG_MS: int(0, 3_600_000).default(5000),
    REDIS_URL: url.default('redis://127.0.0.1:6379'),
    REDIS_KEY_PREFIX: z.string().default('sp'),
    PUBLIC_BASE_URL: url.default('http://localhost:3000'),
    CHECKOUT_BASE_URL: url.optional(),
    // Absent: PUBLIC_BASE_URL/docs/errors, the error reference this service serves itself (src/api/error-docs.ts).
    DOCS_URL: url.optional(),
    MASTER_KEY: z
      .string({ error: 'is required: 64 hex characters (32 bytes), e.g. from `openssl rand -hex 32`' })
      .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters (32 bytes), e.g. from `openssl rand -hex 32`'),
    ROLES: z
      .string()
      .default('api,worker,watcher')
      .transform((s) =>
        s
          .split(',')
          .map((r) => r.trim())
          .filter(Boolean),
      )
      .pipe(
        z
          .array(z.enum(['api', 'worker', 'watcher', 'console', 'signer']))
          .min(1)
          .refine((r) => !r.includes('signer') || r.length === 1, {
            message: 'signer runs alone (ROLES=signer): no other role may share the process that holds the seed',
          }),
      ),
    MIGRATE_ON_START: bool.default(true),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    AUTH_TIMESTAMP_WINDOW_SECONDS: int(1, 3600).default(300),
    MAX_BODY_BYTES: int(1024, 10 * 1024 * 1024).default(65_536),
    HTTP_REQUEST_TIMEOUT_MS: int(1000, 600_000).default(30_000),
    SHUTDOWN_GRACE_MS: int(0, 600_000).default(10_000),
    TRUST_PROXY: trustProxy.default(false),
    API_RATE_LIMIT_PER_KEY_PER_SECOND: int(0, 1_000_000).default(100),
    API_RATE_LIMIT_PER_IP_PER_SECOND: int(0, 1_000_000).default(200),
    API_AUTH_FAILURES_PER_IP_PER_MINUTE: int(0, 1_000_000).default(30),
    CHECKOUT_STREAMS_PER_SESSION: int(0, 100_000).default(10),
    CHECKOUT_STREAMS_PER_IP: int(0, 1_000_000).default(50),
    CHECKOUT_STREAMS_TOTAL: int(0, 1_000_000).default(5000),
    SESSION_LIFETIME_SECONDS: int(60, 7 * 86_400).default(1800),
    EXPIRY_SWEEP_INTERVAL_MS: int(100, 3_600_000).default(15_000),
    RECONCILE_INTERVAL_MS: int(0, 86_400_000).default(3_600_000),
    RATE_SOURCES: z.string().default('peg'),
    RATE_TIMEOUT_MS: int(50, 60_000).default(2000),
    RATE_CACHE_TTL_MS: int(0, 3_600_000).default(30_000),
    RATE_COINBASE_BASE_URL: url.default('https://api.coinbase.com'),
    RATE_BINANCE_BASE_URL: url.default('https://api.binance.com'),
    PAYOUT_CONCURRENCY: int(1, 500).default(16),
    PAYOUT_POLL_MS: int(50, 600_000).default(2000),
    PAYOUT_STUCK_AFTER_MS: int(1000, 86_400_000).default(180_000),
    PAYOUT_FEE_BUMP_PERCENT: int(10, 500).default(25),
    PAYOUT_JOB_BUDGET_MS: int(1000, 3_600_000).default(60_000),
    PAYOUT_SWEEP_INTERVAL_MS: int(1000, 3_600_000).default(30_000),
    PAYOUT_LOCK_MS: int(1000, 600_000).default(30_000),
    // TRON and Solana: how far back the outbound engine's first look at a sending wallet after a start reads its
    // outgoing transactions for ones the ledger does not know (docs/outbound.md "Transactions the ledger does not know").
    OUTBOUND_WALLET_LOOKBACK_HOURS: int(1, 24 * 90).default(72),
    // Sweeping (docs/treasury.md): the worker role plans and starts sweeps every SWEEP_INTERVAL_SECONDS (0: never; the
    // operator runs `sweep run`) and advances the running ones every SWEEP_TICK_MS.
    SWEEP_INTERVAL_SECONDS: int(0, 30 * 86_400).default(0),
    SWEEP_TICK_MS: int(100, 600_000).default(5000),
    NATIVE_PRICE_SOURCES: z.string().default('coinbase,binance'),
    METRICS_HOST: z.string().default('127.0.0.1'),
    // `0` or `off`: no metrics listener in this process.
    METRICS_PORT: z
      .string()
      .default('9464')
      .transform((s, ctx): number | null => {
        if (s === 'off' || s === '0') return null;
        const n = Number(s);
        if (/^\d{1,5}$/.test(s) && n >= 1 && n <= 65535) return n;
        ctx.addIssue({ code: 'custom', message: 'must be a port (1..65535), or 0/off to disable the metrics listener' });
        return z.NEVER;
      }),
    METRICS_HEAD_INTERVAL_MS: int(1000, 3_600_000).default(15_000),
    // The web console (docs/console.md): the `console` role serves it on a listener of its own; with CONSOLE_PATH it is
    // served under that path of the public listener instead (by the api role).
    CONSOLE_HOST: z.string().default('127.0.0.1'),
    CONSOLE_PORT: int(0, 65535).default(3001),
    CONSOLE_PATH: z
      .string()
      .regex(/^\/[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/, 'must be a path such as /console (no trailing slash)')
      .optional(),
    CONSOLE_SECURE_COOKIES: bool.default(true),
    CONSOLE_IDLE_TIMEOUT_MINUTES: int(1, 24 * 60).default(30),
    CONSOLE_ABSOLUTE_TIMEOUT_HOURS: int(1, 30 * 24).default(12),
    CONSOLE_LOGIN_FAILURES_PER_ACCOUNT: int(1, 1000).default(5),
    CONSOLE_LOGIN_FAILURES_PER_IP: int(1, 100_000).default(20),
    CONSOLE_LIVE_INTERVAL_MS: int(100, 60_000).default(1000),
    CONSOLE_DEMO: bool.default(false),
    CONSOLE_UI_DIR: z.string().optional(),
    METRICS_BALANCE_INTERVAL_MS: int(5000, 86_400_000).default(300_000),
    // The signer role (docs/signer.md): the Unix socket it listens on (ROLES=signer) and every other process asks it
    // on. Unset: no signer; a process with HD_MNEMONIC signs in process, as before.
    SIGNER_SOCKET: z
      .string()
      .regex(/^\/[^\0]{1,100}$/, 'must be an absolute path of at most 100 characters (a Unix socket)')
      .optional(),
  })
  .extend(webhookEnvSchema.shape)
  .extend(retentionEnvSchema.shape);

export type Config = z.infer<typeof configSchema> & { checkoutBaseUrl: string; docsUrl: string };

export class ConfigError extends Error {}

/** Validates an environment record; throws ConfigError listing each bad variable by name. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = configSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${String(i.path[0] ?? '?')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const c = parsed.data;
  if (c.DATABASE_POOL_MODE === 'transaction' && c.DATABASE_DIRECT_URL === undefined && sessionStateRoles(c).length > 0) {
    throw new ConfigError(
      `Invalid configuration:\n  DATABASE_DIRECT_URL: is required with DATABASE_POOL_MODE=transaction for ${sessionStateRoles(c).join(', ')} ` +
        '(session-level advisory locks or LISTEN cannot go through a transaction-pooling bouncer)',
    );
  }
  const publicBase = c.PUBLIC_BASE_URL.replace(/\/$/, '');
  return {
    ...c,
    checkoutBaseUrl: (c.CHECKOUT_BASE_URL ?? `${publicBase}/pay`).replace(/\/$/, ''),
    docsUrl: c.DOCS_URL ?? `${publicBase}/docs/errors`,
  };
}

/** Loads ./.env into process.env when present (values already in the environment win). */
export function loadDotEnv(path = '.env'): void {
  if (existsSync(path)) process.loadEnvFile(path);
}

/** What of this process needs a session of its own (docs/deploy.md "PgBouncer"): never through transaction pooling. */
export function sessionStateRoles(c: { ROLES: string[]; MIGRATE_ON_START: boolean }): string[] {
  return [
    ...(c.MIGRATE_ON_START ? ['MIGRATE_ON_START (the migration lock)'] : []),
    ...(c.ROLES.includes('watcher') ? ['the watcher role (leader locks)'] : []),
    ...(c.ROLES.includes('worker') ? ['the worker role (reconcile lock, outbox LISTEN)'] : []),
  ];
}
