import { existsSync } from 'node:fs';
import { ConfigError, loadConfig, loadDotEnv } from '../config.js';
import { createDb } from '../db/database.js';
import { ensureDatabase } from '../db/ensure-database.js';
import { CliFailure, UsageError, print } from './args.js';
import type { TreasuryCliContext } from './treasury.js';

// Operator CLI: `npm run cli -- <command> ...`. Output is JSON on stdout; errors go to stderr with exit code 1 (2 for usage).
// Each command imports what it uses when it runs (`await import`), never at start-up: `export` or `journal` do not load
// the chain SDKs, BullMQ or the migrations (test/integration/cli-lazy-imports.test.ts), which cost an export 80 MB of RSS and
// seconds of start-up before any row (docs/performance.md "Scale").

const indent = (usage: string) =>
  usage
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');

/** The usage text: every command's own usage, so it imports every command (help and unknown commands only). */
async function usage(): Promise<string> {
  const [payouts, moneyBack, exp, treasury, wallets, reconcile, subscriptions, consoleCmd, signer, retention] = await Promise.all([
    import('./payouts.js'),
    import('./money-back.js'),
    import('./export.js'),
    import('./treasury.js'),
    import('./wallets.js'),
    import('./reconcile.js'),
    import('./subscriptions.js'),
    import('./console.js'),
    import('./signer.js'),
    import('./retention.js'),
  ]);
  return `usage: npm run cli -- <command>
  migrate                                             apply pending database migrations
  merchant create --name <name> [--webhook-url <url> [--test-only]]
                                                      create a merchant with a test key (prints it once)
  merchant list                                       merchants with their effective settings
  merchant show <merchant_id>
  merchant update <merchant_id> [--session-lifetime-seconds N|default] [--underpayment-tolerance-bps N]
                                                      per-merchant settings (default: the deployment's)
  key create --merchant <id> --mode test|live         issue another key (rotation)
  key revoke <key-prefix>                             revoke a key (e.g. sk_live_AbCdEfGh)
  key list [--merchant <id>]
  webhooks failed [--merchant <id>] [--since <iso>]   deliveries that failed (see docs/webhooks.md)
  webhooks resend <evt_id>                            deliver one event again (same id, same body)
  webhooks resend-failed --since <iso> [--merchant <id>]
  webhooks rotate-secret --merchant <id> [--overlap-hours N]
  webhooks set-url --merchant <id> --url <url>        checked against the endpoint rules
  devnet pay <session_id> [--network --token --amount] pay a session on the local devnet of \`npm run dev\`
${indent(payouts.PAYOUTS_USAGE)}
${indent(moneyBack.MONEY_BACK_USAGE)}
${indent(exp.EXPORT_USAGE)}
${indent(treasury.TREASURY_USAGE)}
${indent(wallets.WALLETS_USAGE)}
${indent(reconcile.RECONCILE_USAGE)}
${indent(subscriptions.SUBSCRIPTIONS_USAGE)}
${indent(consoleCmd.CONSOLE_USAGE)}
${indent(signer.SIGNER_USAGE)}
${indent(retention.RETENTION_USAGE)}`;
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help') {
    process.stdout.write(`${await usage()}\n`);
    return;
  }
  if (command === 'devnet') return (await import('./devnet.js')).devnetCli(rest); // local devnet only: needs no database or master key
  await useOperatorSettings();
  const config = loadConfig();
  // Operator commands take session locks (migrate, reconcile): never through a transaction-pooling bouncer.
  const dbUrl = config.DATABASE_POOL_MODE === 'transaction' ? (config.DATABASE_DIRECT_URL ?? config.DATABASE_URL) : config.DATABASE_URL;
  await ensureDatabase(dbUrl);
  const db = createDb(dbUrl, 2);
  try {
    const box = async () => new (await import('../security/secret-box.js')).SecretBox(config.MASTER_KEY);
    const migrate = async () => (await import('../db/migrate.js')).migrateToLatest(db);
    switch (command) {
      case 'migrate': {
        const r = await migrate();
        print({ applied: (r.results ?? []).map((m) => m.migrationName) });
        return;
      }
      case 'merchant': {
        await migrate(); // a newcomer may create a merchant before ever starting the service
        const { webhookSettingsFrom } = await import('../webhooks/config.js');
        const webhookPolicy = { allowPrivateTargetsInTest: webhookSettingsFrom(config).allowPrivateTargetsInTest };
        const { merchantCli } = await import('./merchants.js');
        return await merchantCli(rest, {
          db,
          box: await box(),
          webhookPolicy,
          defaultSessionLifetimeSeconds: config.SESSION_LIFETIME_SECONDS,
        });
      }
      case 'key':
        return await (await import('./merchants.js')).keyCli(rest, { db, box: await box() });
      case 'payouts':
      case 'deposits':
      case 'sessions': {
        const [{ connectRedis }, { createPayoutScheduler }, { keyDeriverOf, keyMaterialFromEnv }] = await Promise.all([
          import('../start/redis.js'),
          import('../refunds/payout-worker.js'),
          import('../signer/from-env.js'),
        ]);
        const redis = connectRedis(config.REDIS_URL, { maxRetriesPerRequest: 2 });
        const scheduler = createPayoutScheduler({ connection: redis, prefix: config.REDIS_KEY_PREFIX });
        try {
          const ctx = {
            db,
            adapters: await verifiedAdapters(),
            keys: keyDeriverOf(keyMaterialFromEnv(process.env)),
            enqueue: (id: string) => scheduler.enqueue(id),
          };
          if (command === 'payouts') return await (await import('./payouts.js')).payoutsCli(rest, ctx);
          if (command === 'deposits') return await (await import('./payouts.js')).depositsCli(rest, ctx);
          return await (await import('./money-back.js')).sessionsCli(rest, ctx);
        } finally {
          await scheduler.close();
          redis.disconnect();
        }
      }
      case 'export': {
        const [{ loadWatcherSettings }, { configuredTokenDecimals }, { createReadDb }, { exportCli }] = await Promise.all([
          import('../watcher/config.js'),
          import('../../chains/chain-registry.js'),
          import('../db/read-db.js'),
          import('./export.js'),
        ]);
        const chains = loadWatcherSettings(process.env).chains;
        // A reporting read: the replica when READ_DATABASE_URL is set and fresh, else the primary (docs/deploy.md).
        const reads = createReadDb(config.READ_DATABASE_URL, db, { maxLagMs: config.READ_REPLICA_MAX_LAG_MS, poolSize: 1 });
        try {
          await exportCli(rest, {
            db,
            reads,
            tokenDecimals: configuredTokenDecimals(chains),
          });
        } finally {
          await reads.destroy();
        }
        return;
      }
      case 'treasury':
        return await (await import('./treasury.js')).treasuryCli(rest, await treasuryContext(db, config));
      case 'sweep':
        return await (await import('./treasury.js')).sweepCli(rest, await treasuryContext(db, config));
      case 'wallets':
        return await (await import('./wallets.js')).walletsCli(rest, await treasuryContext(db, config));
      case 'reconcile':
        return await (await import('./reconcile.js')).reconcileCli(rest, { db, adapters: await verifiedAdapters() });
      case 'journal':
        return await (await import('./reconcile.js')).journalCli(rest, { db });
      case 'console':
        await migrate(); // the first operator may be created before the service ever started
        return await (await import('./console.js')).consoleCli(rest, { db, box: await box() });
      case 'signer':
        await migrate(); // the switch may be thrown before a signer ever started
        return await (await import('./signer.js')).signerCli(rest, { db });
      case 'retention': {
        const { retentionSettingsFrom } = await import('../jobs/retention-settings.js');
        return await (await import('./retention.js')).retentionCli(rest, { db, settings: retentionSettingsFrom(config) });
      }
      case 'subscriptions': {
        const { systemClock } = await import('../domain/clock.js');
        return await (await import('./subscriptions.js')).subscriptionsCli(rest, {
          db,
          clock: systemClock,
          checkoutBaseUrl: config.checkoutBaseUrl,
        });
      }
      case 'webhooks': {
        const { connectRedis } = await import('../start/redis.js');
        const redis = connectRedis(config.REDIS_URL, { maxRetriesPerRequest: 2 });
        try {
          return await (await import('./webhooks.js')).webhooksCli(rest, { db, redis, box: await box(), config });
        } finally {
          redis.disconnect();
        }
      }
      default:
        throw new UsageError(`unknown command ${command}\n${await usage()}`);
    }
  } finally {
    await db.destroy();
  }
}

/** The chains' adapters, verified against their RPCs, built when a command first asks for them. */
async function verifiedAdapters() {
  const [{ createVerifiedAdapters }, { loadWatcherSettings }] = await Promise.all([
    import('../watcher/start.js'),
    import('../watcher/config.js'),
  ]);
  return () => createVerifiedAdapters(loadWatcherSettings(process.env), process.env);
}

/** What the treasury and sweep commands need: chains, keys (the signer for `sweep run`), fee prices, engine settings. */
async function treasuryContext(db: ReturnType<typeof createDb>, config: ReturnType<typeof loadConfig>): Promise<TreasuryCliContext> {
  const [{ keyDeriverOf, keyMaterialFromEnv }, { createNativePriceService, nativePriceConfigFrom }, { createLogger }] = await Promise.all([
    import('../signer/from-env.js'),
    import('../rates/native-prices.js'),
    import('../logger.js'),
  ]);
  const material = keyMaterialFromEnv(process.env);
  return {
    db,
    adapters: await verifiedAdapters(),
    keys: keyDeriverOf(material),
    signer: material.kind === 'signer' || material.kind === 'remote' ? material.signer : null,
    prices: () => createNativePriceService(nativePriceConfigFrom(config)),
    engine: { pollMs: config.PAYOUT_POLL_MS, stuckAfterMs: config.PAYOUT_STUCK_AFTER_MS, feeBumpPercent: config.PAYOUT_FEE_BUMP_PERCENT },
    env: process.env,
    // Progress on stderr; stdout stays the command's JSON.
    log: createLogger(config.LOG_LEVEL, { role: 'sweep' }, (l) => process.stderr.write(l)),
  };
}

/**
 * Where the settings come from, said on stderr: the environment, then `.env` (which never overrides it); when neither
 * gives MASTER_KEY and `npm run dev` is running, the demo's settings as a whole (its database, Redis prefix, key,
 * mnemonic and chains), so that a demo key is never paired with another deployment's database.
 */
async function useOperatorSettings(): Promise<void> {
  loadDotEnv();
  if (process.env.MASTER_KEY?.trim()) {
    process.stderr.write(`settings: the environment${existsSync('.env') ? ' and .env' : ''}\n`);
    return;
  }
  const demo = (await import('./devnet.js')).runningDevnetSettings(process.env);
  if (!demo) return; // loadConfig names what is missing
  Object.assign(process.env, demo.env);
  process.stderr.write(`settings: the running demo (npm run dev, pid ${demo.pid}, ${demo.file})\n`);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof CliFailure) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  if (err instanceof UsageError || err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`error: ${(err as Error).message}\n`);
  process.exit(1);
});
