import { connectRedis } from './start/redis.js';
import type { ChainRegistry } from '../chains/chain-registry.js';
import { buildServer } from './api/server.js';
import { registerCheckout } from './checkout/plugin.js';
import { ConfigError, loadConfig, loadDotEnv, type Config } from './config.js';
import { usesNamedStatements } from './db/named-statements.js';
import { createDb } from './db/database.js';
import { reportingReadsFor } from './start/read-replica.js';
import { ensureDatabase } from './db/ensure-database.js';
import { migrateToLatest } from './db/migrate.js';
import { createExpiryScheduler, startExpiryWorker } from './jobs/session-expiry.js';
import { startRetentionWorker } from './jobs/retention.js';
import { retentionSettingsFrom } from './jobs/retention-settings.js';
import { recordRetentionRun } from './metrics/retention.js';
import { createLogger, type Logger } from './logger.js';
import { createRateService } from './rates/index.js';
import { SecretBox } from './security/secret-box.js';
import { signerEndpointFromEnv } from './signer/endpoint.js';
import { keyDeriverOf, keyMaterialFromEnv } from './signer/from-env.js';
import { startDeliveryWorker, startOutboxRelay } from './webhooks/index.js';
import { createPayoutScheduler, startPayoutWorker } from './refunds/payout-worker.js';
import { startSweepWorker } from './treasury/worker.js';
import { createNativePriceService, nativePriceConfigFrom } from './rates/native-prices.js';
import { createDepositSetupScheduler, startDepositSetupWorker } from './payments/deposit-setup.js';
import { webhookSettingsFrom } from './webhooks/config.js';
import { loadWatcherSettings } from './watcher/config.js';
import { createVerifiedAdapters, startChainWatchers } from './watcher/start.js';
import type { Clock } from './domain/clock.js';
import { startSubscriptionWorker } from './subscriptions/worker.js';
import { startReconcileJob } from './reconcile/job.js';
import { subscriptionSettingsFromEnv } from './domain/subscription-settings.js';
import { registerAuthorizePage } from './subscriptions/page/plugin.js';
import { createWalletResolver } from './subscriptions/wallets.js';
import { startProcessMetrics } from './metrics-collectors/start.js';
import { rpcMetricsObserver } from './metrics/rpc.js';
import { consolePlugin, startConsoleListener } from './start/console.js';
import { signerLimitsFrom } from './signer-service/limits.js';
import { startSignerServer } from './signer-service/server.js';

// Process roles: `api`, `worker`, `watcher`, or all in one process (the default). See docs/architecture.md.

export interface RunningService {
  stop(): Promise<void>;
  adapters: ChainRegistry;
  port?: number;
  /** The console's own listener's port (the `console` role without CONSOLE_PATH). */
  consolePort?: number;
  /** The metrics listener's port (METRICS_PORT); undefined when off. */
  metricsPort?: number;
}

/** Injection points for tests; a deployment passes none. */
export interface StartOverrides {
  /** The subscription clock (renewals, dunning, expiry): tests move time with a ManualClock. */
  clock?: Clock;
  /** Where the API listener's request log lines go (stdout by default); tests capture them. */
  httpLogStream?: NodeJS.WritableStream;
}

export async function start(
  config: Config,
  env: Record<string, string | undefined> = process.env,
  log: Logger = createLogger(config.LOG_LEVEL),
  overrides: StartOverrides = {},
): Promise<RunningService> {
  const clock = overrides.clock;
  // Everything that can be refused is checked before anything starts.
  const watcherSettings = loadWatcherSettings(env);
  const keyMaterial = keyMaterialFromEnv(env, { signerRole: config.ROLES.includes('signer') });
  // What signs this process's transactions: the seed in process, or the signer role over its socket.
  const txSigner = keyMaterial.kind === 'signer' || keyMaterial.kind === 'remote' ? keyMaterial.signer : null;
  const signerLimits = config.ROLES.includes('signer') ? signerLimitsFrom(env) : null;
  const signerEndpoint = signerLimits ? signerEndpointFromEnv(env) : undefined;
  if (signerLimits && !signerEndpoint)
    throw new Error('ROLES=signer needs SIGNER_SOCKET (a Unix socket) or SIGNER_TLS_URL (mutual TLS): where it listens');
  const keys = keyDeriverOf(keyMaterial);
  const subscriptionSettings = subscriptionSettingsFromEnv(env);
  // TRON, Solana: how far back the restore guard reads a wallet's outgoing transactions after a start.
  const walletLookbackMs = config.OUTBOUND_WALLET_LOOKBACK_HOURS * 3_600_000;

  // DATABASE_POOL_MODE=transaction (docs/deploy.md "PgBouncer"): DATABASE_URL is a bouncer; what holds session state
  // (the migration lock, the watchers' leader locks, the reconcile lock, the relay's LISTEN) uses DATABASE_DIRECT_URL.
  const directUrl = config.DATABASE_POOL_MODE === 'transaction' ? (config.DATABASE_DIRECT_URL ?? config.DATABASE_URL) : config.DATABASE_URL;
  await ensureDatabase(directUrl);
  // Named prepared statements for the API's hot statements (src/db/named-statements.ts): not through PgBouncer in
  // transaction pooling, where a statement's name does not stay on one server connection, nor when turned off.
  const db = createDb(config.DATABASE_URL, config.DATABASE_POOL_SIZE, { namedStatements: usesNamedStatements(config) });
  const sessionDb = directUrl === config.DATABASE_URL ? db : createDb(directUrl, config.DATABASE_POOL_SIZE);
  if (config.MIGRATE_ON_START) await migrateToLatest(sessionDb);
  const reads = reportingReadsFor(config, db, log.child({ role: 'read-replica' }));
  const redis = connectRedis(config.REDIS_URL, { maxRetriesPerRequest: 3 });
  redis.on('error', (err) => log.warn({ err }, 'redis connection error')); // reconnects on its own; /readyz reports it
  const box = new SecretBox(config.MASTER_KEY);
  const queueCtx = { connection: redis, prefix: config.REDIS_KEY_PREFIX };
  const stops: Array<() => Promise<void>> = [];
  // The HTTP listeners close first and together: each waits for its requests in flight (SHUTDOWN_GRACE_MS,
  // src/api/in-flight.ts) while the pool, Redis and the queues they use are still open.
  const listeners: Array<() => Promise<void>> = [];

  // Chain adapters verify every token's decimals on chain at start and refuse to run on a mismatch.
  // TRON's adapter reads its extra settings (full host, API key, fee ceiling) from the same environment.
  const adapters = await createVerifiedAdapters(watcherSettings, env, {
    rpcLog: log.child({ role: 'rpc' }),
    rpcObserver: rpcMetricsObserver,
  });
  if (adapters.size === 0) log.warn({}, 'no chain is configured (CHAIN_*_RPC_URL): sessions can be created but not paid');
  // Only the API derives deposit addresses; watcher pods run without keys by design (deploy/kubernetes).
  if (config.ROLES.includes('api') && adapters.size > 0 && !keys) {
    log.warn({}, 'no HD_MNEMONIC or HD_ACCOUNT_XPUBS: payers cannot select a network');
  }

  const processMetrics = await startProcessMetrics({
    host: config.METRICS_HOST,
    port: config.METRICS_PORT,
    roles: config.ROLES,
    db,
    redis,
    redisPrefix: config.REDIS_KEY_PREFIX,
    adapters,
    keys,
    headIntervalMs: config.METRICS_HEAD_INTERVAL_MS,
    balanceIntervalMs: config.METRICS_BALANCE_INTERVAL_MS,
    log: log.child({ role: 'metrics' }),
  });
  stops.push(() => processMetrics.stop());

  if (config.ROLES.includes('watcher') && adapters.size > 0) {
    const watchers = await startChainWatchers({ db: sessionDb, settings: watcherSettings, log: log.child({ role: 'watcher' }), adapters });
    stops.push(() => watchers.stop());
  }

  if (config.ROLES.includes('worker')) {
    const expiry = await startExpiryWorker(queueCtx, {
      db,
      tokenDecimals: adapters.tokenDecimals,
      displayAddress: (network, mode, canonical) => adapters.displayAddress(network, mode, canonical),
      sweepIntervalMs: config.EXPIRY_SWEEP_INTERVAL_MS,
      logger: log.child({ role: 'worker' }),
    });
    stops.push(() => expiry.stop());
    // Pruning of what grows without bound (docs/retention.md): one schedule for the deployment.
    const retention = retentionSettingsFrom(config);
    if (retention.intervalMs > 0) {
      const job = await startRetentionWorker(queueCtx, {
        db,
        settings: retention,
        logger: log.child({ role: 'retention' }),
        onRun: (r) => recordRetentionRun(r.totals, new Date(r.finished_at)),
      });
      stops.push(() => job.stop());
    }
    if (config.RECONCILE_INTERVAL_MS > 0) {
      const job = startReconcileJob({
        db: sessionDb,
        adapters,
        intervalMs: config.RECONCILE_INTERVAL_MS,
        log: log.child({ role: 'reconcile' }),
      });
      stops.push(() => job.stop());
    }
    // Outbox → BullMQ → merchant endpoints. The relay wakes on NOTIFY and polls as a fallback.
    const webhooks = webhookSettingsFrom(config);
    const wlog = log.child({ role: 'webhooks' });
    const relay = await startOutboxRelay({
      db,
      redis,
      prefix: config.REDIS_KEY_PREFIX,
      databaseUrl: directUrl,
      batchSize: webhooks.relayBatchSize,
      pollIntervalMs: webhooks.relayPollMs,
      logger: wlog,
    });
    const delivery = await startDeliveryWorker({ db, redis, box, prefix: config.REDIS_KEY_PREFIX, ...webhooks, logger: wlog });
    stops.push(
      () => relay.stop(),
      () => delivery.stop(),
    );
    // Refund payouts sign with the mnemonic's hot-wallet keys; a watch-only process leaves them to a signing worker.
    if (txSigner) {
      const payouts = await startPayoutWorker(queueCtx, {
        db,
        adapters,
        signer: txSigner,
        concurrency: config.PAYOUT_CONCURRENCY,
        pollMs: config.PAYOUT_POLL_MS,
        stuckAfterMs: config.PAYOUT_STUCK_AFTER_MS,
        feeBumpPercent: config.PAYOUT_FEE_BUMP_PERCENT,
        walletLookbackMs,
        jobBudgetMs: config.PAYOUT_JOB_BUDGET_MS,
        sweepIntervalMs: config.PAYOUT_SWEEP_INTERVAL_MS,
        lockDurationMs: config.PAYOUT_LOCK_MS,
        log: log.child({ role: 'payouts' }),
      });
      const depositSetup = startDepositSetupWorker(queueCtx, {
        db,
        adapters,
        signer: txSigner,
        pollMs: config.PAYOUT_POLL_MS,
        stuckAfterMs: config.PAYOUT_STUCK_AFTER_MS,
        feeBumpPercent: config.PAYOUT_FEE_BUMP_PERCENT,
        walletLookbackMs,
        jobBudgetMs: config.PAYOUT_JOB_BUDGET_MS,
        lockDurationMs: config.PAYOUT_LOCK_MS,
        sweepIntervalMs: config.PAYOUT_SWEEP_INTERVAL_MS,
        log: log.child({ role: 'deposit-setup' }),
      });
      stops.push(
        () => payouts.stop(),
        () => depositSetup.stop(),
      );
      // Subscriptions: approvals, renewals, dunning and charges, driven by the database (docs/subscriptions.md).
      const subscriptions = startSubscriptionWorker({
        db,
        adapters,
        signer: txSigner,
        settings: subscriptionSettings,
        checkoutBaseUrl: config.checkoutBaseUrl,
        intervalMs: subscriptionSettings.tickMs,
        log: log.child({ role: 'subscriptions' }),
        stuckAfterMs: config.PAYOUT_STUCK_AFTER_MS,
        feeBumpPercent: config.PAYOUT_FEE_BUMP_PERCENT,
        walletLookbackMs,
        ...(clock ? { clock } : {}),
      });
      stops.push(() => subscriptions.stop());
      // Sweeping deposit addresses (docs/treasury.md): planned only when SWEEP_INTERVAL_SECONDS is set; the sweeps
      // running (started by `sweep run`, which may have been interrupted or timed out) are advanced whatever the
      // schedule, so a sweep waiting for fee money finishes once an operator adds it.
      {
        const engine = {
          db,
          adapters,
          signer: txSigner,
          pollMs: config.PAYOUT_POLL_MS,
          stuckAfterMs: config.PAYOUT_STUCK_AFTER_MS,
          feeBumpPercent: config.PAYOUT_FEE_BUMP_PERCENT,
          walletLookbackMs,
          log: log.child({ role: 'sweeps' }),
        };
        // Prices are needed to plan; a worker that only advances running sweeps starts without a price source.
        const prices = config.SWEEP_INTERVAL_SECONDS > 0 ? createNativePriceService(nativePriceConfigFrom(config)) : null;
        const sweeps = startSweepWorker({
          engine,
          planner: { db, adapters, keys: txSigner, prices },
          intervalMs: config.SWEEP_INTERVAL_SECONDS * 1000,
          tickMs: config.SWEEP_TICK_MS,
          log: log.child({ role: 'sweeps' }),
        });
        stops.push(() => sweeps.stop());
      }
    } else {
      log.warn({}, 'no HD_MNEMONIC: this worker does not pay refunds');
    }
  }

  // The console's payouts go through the same BullMQ queue as the API's (created here when the api role is absent).
  const consoleParts = (enqueuePayout: (id: string) => Promise<void>) => ({
    config,
    db,
    reads,
    redis,
    box,
    chains: adapters,
    log: log.child({ role: 'console' }),
    enqueuePayout,
    env,
    keys,
    signer: txSigner,
    ...(clock ? { clock } : {}),
  });

  // The signer role (docs/signer.md): the seed holder's server on its socket, and nothing else in this process.
  // (keyMaterialFromEnv refused a signer role without the seed, and the check above one without its endpoint.)
  if (signerLimits && signerEndpoint && keyMaterial.kind === 'signer') {
    const signerServer = await startSignerServer({
      db,
      signer: keyMaterial.signer,
      adapters,
      ...(signerEndpoint.kind === 'socket' ? { socketPath: signerEndpoint.path } : { tls: signerEndpoint }),
      limits: signerLimits,
      log: log.child({ role: 'signer' }),
    });
    stops.unshift(() => signerServer.close());
  }

  let port: number | undefined;
  let consolePort: number | undefined;
  if (config.ROLES.includes('console') && config.CONSOLE_PATH === undefined) {
    const payouts = createPayoutScheduler(queueCtx);
    const consoleServer = await startConsoleListener(consoleParts((id) => payouts.enqueue(id)));
    consolePort = consoleServer.port;
    listeners.push(async () => {
      await consoleServer.app.close();
      await payouts.close();
    });
  }
  if (config.ROLES.includes('api')) {
    const scheduler = createExpiryScheduler(queueCtx);
    const payoutScheduler = createPayoutScheduler(queueCtx);
    const depositSetupScheduler = createDepositSetupScheduler(queueCtx);
    const app = await buildServer({
      db,
      reads,
      redis,
      box,
      rates: createRateService({
        sources: config.RATE_SOURCES.split(',')
          .map((s) => s.trim())
          .filter(Boolean),
        coinbaseBaseUrl: config.RATE_COINBASE_BASE_URL,
        binanceBaseUrl: config.RATE_BINANCE_BASE_URL,
        timeoutMs: config.RATE_TIMEOUT_MS,
        cacheTtlMs: config.RATE_CACHE_TTL_MS,
      }),
      checkoutBaseUrl: config.checkoutBaseUrl,
      docsUrl: config.docsUrl,
      redisPrefix: config.REDIS_KEY_PREFIX,
      authWindowSeconds: config.AUTH_TIMESTAMP_WINDOW_SECONDS,
      maxBodyBytes: config.MAX_BODY_BYTES,
      requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
      shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
      ...(overrides.httpLogStream ? { logStream: overrides.httpLogStream } : {}),
      sessionLifetimeSeconds: config.SESSION_LIFETIME_SECONDS,
      logLevel: config.LOG_LEVEL,
      trustProxy: config.TRUST_PROXY,
      httpMetrics: processMetrics.port !== undefined,
      rateLimits: {
        perKeyPerSecond: config.API_RATE_LIMIT_PER_KEY_PER_SECOND,
        perIpPerSecond: config.API_RATE_LIMIT_PER_IP_PER_SECOND,
        authFailuresPerIpPerMinute: config.API_AUTH_FAILURES_PER_IP_PER_MINUTE,
      },
      onSessionCreated: (s) => scheduler.schedule(s),
      chains: adapters,
      onRefundCreated: (r) => payoutScheduler.enqueue(r.id),
      subscriptions: { settings: subscriptionSettings, ...(clock ? { clock } : {}) },
      plugins: [
        ...(config.CONSOLE_PATH !== undefined ? [consolePlugin(consoleParts((id) => payoutScheduler.enqueue(id)))] : []),
        (app) =>
          registerCheckout(app, {
            db,
            adapters,
            keys,
            checkoutBaseUrl: config.checkoutBaseUrl,
            onSelected: (id) => depositSetupScheduler.enqueue(id),
            streamsPerSession: config.CHECKOUT_STREAMS_PER_SESSION,
            streamsPerIp: config.CHECKOUT_STREAMS_PER_IP,
            streamsTotal: config.CHECKOUT_STREAMS_TOTAL,
          }),
        ...(keys
          ? [
              (app: import('fastify').FastifyInstance) =>
                registerAuthorizePage(app, {
                  db,
                  adapters,
                  walletResolver: createWalletResolver(db, adapters, keys),
                  settings: subscriptionSettings,
                  checkoutBaseUrl: config.checkoutBaseUrl,
                  ...(clock ? { clock } : {}),
                }),
            ]
          : []),
      ],
    });
    await app.listen({ host: config.HOST, port: config.PORT });
    const address = app.server.address();
    port = typeof address === 'object' && address ? address.port : undefined;
    listeners.push(async () => {
      await app.close();
      await scheduler.close();
      await payoutScheduler.close();
      await depositSetupScheduler.close();
    });
  }

  return {
    adapters,
    port,
    consolePort,
    metricsPort: processMetrics.port,
    async stop() {
      await Promise.all(listeners.map((close) => close()));
      for (const s of stops) await s();
      redis.disconnect();
      await reads.destroy();
      if (sessionDb !== db) await sessionDb.destroy();
      await db.destroy();
    },
  };
}

async function run(): Promise<void> {
  loadDotEnv();
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.LOG_LEVEL);
  const service = await start(config, process.env, log);
  log.info(
    {
      roles: config.ROLES,
      port: service.port,
      consolePort: service.consolePort,
      metricsPort: service.metricsPort,
      chains: service.adapters.labels(),
    },
    'service started',
  );
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    service.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'unclean stop');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  run().catch((err: unknown) => {
    process.stderr.write(`${JSON.stringify({ level: 60, time: Date.now(), msg: 'start-up failed', err: (err as Error).message })}\n`);
    process.exit(1);
  });
}
