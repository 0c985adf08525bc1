import { existsSync } from 'node:fs';
import { ConfigError, loadConfig, loadDotEnv } from '../config.js';
import { createDb } from '../db/database.js';
import { createReadDb } from '../db/read-db.js';
import { ensureDatabase } from '../db/ensure-database.js';
import { migrateToLatest } from '../db/migrate.js';
import { SecretBox } from '../security/secret-box.js';
import { UsageError, print } from './args.js';
import { keyCli, merchantCli } from './merchants.js';
import { devnetCli, runningDevnetSettings } from './devnet.js';
import { webhooksCli } from './webhooks.js';
import { webhookSettingsFrom } from '../webhooks/config.js';
import { PAYOUTS_USAGE, depositsCli, payoutsCli } from './payouts.js';
import { MONEY_BACK_USAGE, sessionsCli } from './money-back.js';
import { EXPORT_USAGE, exportCli } from './export.js';
import { keyDeriverOf, keyMaterialFromEnv } from '../signer/from-env.js';
import { loadWatcherSettings } from '../watcher/config.js';
import { configuredTokenDecimals } from '../../chains/chain-registry.js';
import { createVerifiedAdapters } from '../watcher/start.js';
import { createPayoutScheduler } from '../refunds/payout-worker.js';
import { connectRedis } from '../start/redis.js';
import { CliFailure, TREASURY_USAGE, sweepCli, treasuryCli, type TreasuryCliContext } from './treasury.js';
import { createNativePriceService, nativePriceConfigFrom } from '../rates/native-prices.js';
import { createLogger } from '../logger.js';
import { RECONCILE_USAGE, journalCli, reconcileCli } from './reconcile.js';
import { SUBSCRIPTIONS_USAGE, subscriptionsCli } from './subscriptions.js';
import { systemClock } from '../domain/clock.js';
import { WALLETS_USAGE, walletsCli } from './wallets.js';
import { CONSOLE_USAGE, consoleCli } from './console.js';
import { SIGNER_USAGE, signerCli } from './signer.js';
import { RETENTION_USAGE, retentionCli } from './retention.js';
import { retentionSettingsFrom } from '../jobs/retention-settings.js';

// Operator CLI: `npm run cli -- <command> ...`. Output is JSON on stdout; errors go to stderr with exit code 1 (2 for usage).
const USAGE = `usage: npm run cli -- <command>
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
${PAYOUTS_USAGE.split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
${MONEY_BACK_USAGE.split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
${EXPORT_USAGE.split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
${TREASURY_USAGE.split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
${WALLETS_USAGE.split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
${RECONCILE_USAGE.split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
${SUBSCRIPTIONS_USAGE.split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
${CONSOLE_USAGE.split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
${SIGNER_USAGE.split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
${RETENTION_USAGE.split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}`;

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (command === 'devnet') return devnetCli(rest); // local devnet only: needs no database or master key
  useOperatorSettings();
  const config = loadConfig();
  // Operator commands take session locks (migrate, reconcile): never through a transaction-pooling bouncer.
  const dbUrl = config.DATABASE_POOL_MODE === 'transaction' ? (config.DATABASE_DIRECT_URL ?? config.DATABASE_URL) : config.DATABASE_URL;
  await ensureDatabase(dbUrl);
  const db = createDb(dbUrl, 2);
  try {
    const box = new SecretBox(config.MASTER_KEY);
    switch (command) {
      case 'migrate': {
        const r = await migrateToLatest(db);
        print({ applied: (r.results ?? []).map((m) => m.migrationName) });
        return;
      }
      case 'merchant': {
        await migrateToLatest(db); // a newcomer may create a merchant before ever starting the service
        const webhookPolicy = { allowPrivateTargetsInTest: webhookSettingsFrom(config).allowPrivateTargetsInTest };
        return await merchantCli(rest, { db, box, webhookPolicy, defaultSessionLifetimeSeconds: config.SESSION_LIFETIME_SECONDS });
      }
      case 'key':
        return await keyCli(rest, { db, box });
      case 'payouts': {
        const redis = connectRedis(config.REDIS_URL, { maxRetriesPerRequest: 2 });
        const scheduler = createPayoutScheduler({ connection: redis, prefix: config.REDIS_KEY_PREFIX });
        try {
          return await payoutsCli(rest, {
            db,
            adapters: () => createVerifiedAdapters(loadWatcherSettings(process.env), process.env),
            keys: keyDeriverOf(keyMaterialFromEnv(process.env)),
            enqueue: (id) => scheduler.enqueue(id),
          });
        } finally {
          await scheduler.close();
          redis.disconnect();
        }
      }
      case 'deposits':
      case 'sessions': {
        const redis = connectRedis(config.REDIS_URL, { maxRetriesPerRequest: 2 });
        const scheduler = createPayoutScheduler({ connection: redis, prefix: config.REDIS_KEY_PREFIX });
        try {
          const ctx = {
            db,
            adapters: () => createVerifiedAdapters(loadWatcherSettings(process.env), process.env),
            keys: keyDeriverOf(keyMaterialFromEnv(process.env)),
            enqueue: (id: string) => scheduler.enqueue(id),
          };
          if (command === 'deposits') return await depositsCli(rest, ctx);
          return await sessionsCli(rest, ctx);
        } finally {
          await scheduler.close();
          redis.disconnect();
        }
      }
      case 'export': {
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
        return await treasuryCli(rest, treasuryContext(db, config));
      case 'sweep':
        return await sweepCli(rest, treasuryContext(db, config));
      case 'wallets':
        return await walletsCli(rest, treasuryContext(db, config));
      case 'reconcile':
        return await reconcileCli(rest, { db, adapters: () => createVerifiedAdapters(loadWatcherSettings(process.env), process.env) });
      case 'journal':
        return await journalCli(rest, { db });
      case 'console':
        await migrateToLatest(db); // the first operator may be created before the service ever started
        return await consoleCli(rest, { db, box });
      case 'signer':
        await migrateToLatest(db); // the switch may be thrown before a signer ever started
        return await signerCli(rest, { db });
      case 'retention':
        return await retentionCli(rest, { db, settings: retentionSettingsFrom(config) });
      case 'subscriptions':
        return await subscriptionsCli(rest, { db, clock: systemClock, checkoutBaseUrl: config.checkoutBaseUrl });
      case 'webhooks': {
        const redis = connectRedis(config.REDIS_URL, { maxRetriesPerRequest: 2 });
        try {
          return await webhooksCli(rest, { db, redis, box, config });
        } finally {
          redis.disconnect();
        }
      }
      default:
        throw new UsageError(`unknown command ${command}\n${USAGE}`);
    }
  } finally {
    await db.destroy();
  }
}

/** What the treasury and sweep commands need: chains, keys (the signer for `sweep run`), fee prices, engine settings. */
function treasuryContext(db: ReturnType<typeof createDb>, config: ReturnType<typeof loadConfig>): TreasuryCliContext {
  const material = keyMaterialFromEnv(process.env);
  return {
    db,
    adapters: () => createVerifiedAdapters(loadWatcherSettings(process.env), process.env),
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
function useOperatorSettings(): void {
  loadDotEnv();
  if (process.env.MASTER_KEY?.trim()) {
    process.stderr.write(`settings: the environment${existsSync('.env') ? ' and .env' : ''}\n`);
    return;
  }
  const demo = runningDevnetSettings(process.env);
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
