import { signerLimitsFrom } from '../../src/signer-service/limits.js';
import { mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSolanaExtraSettings } from '../../chains/solana/config.js';
import { NETWORKS as REGISTRY_NETWORKS } from '../../chains/registry.js';
import { loadTronExtraSettings } from '../../chains/tron/config.js';
import { devnetStateFile } from '../../src/cli/devnet.js';
import { configSchema, loadConfig } from '../../src/config.js';
import { keyDeriverOf, keyMaterialFromEnv } from '../../src/signer/from-env.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';
import { subscriptionSettingsFromEnv } from '../../src/domain/subscription-settings.js';
import { loadWatcherSettings } from '../../src/watcher/config.js';
import { webhookSettingsFrom } from '../../src/webhooks/config.js';
import { retentionSettingsFrom } from '../../src/jobs/retention-settings.js';
import { PROFILE_NAMES, publicProfile } from '../../scripts/testnet/profiles.js';

// A documented variable that does nothing is a bug. For every variable of README.md's configuration table (with
// <NET> and <MODE> expanded), this proves (1) the code reads it: its name, or for a per-chain variable its suffix next
// to the chain prefix, is in the source of src/, chains/, scripts/ or test/support/; and (2) it changes something:
// a probe of what the variable feeds (the parsed configuration, the chain settings, the key material, ...) answers
// differently with a sample value than without it, and the field the probe reads is used outside its loader.

type Env = Record<string, string | undefined>;
const MASTER = { MASTER_KEY: '5a'.repeat(32) };
const MNEMONIC = 'test test test test test test test test test test test junk';
const NETS = ['ETHEREUM', 'BSC', 'TRON', 'SOLANA'] as const;
const MODES = ['LIVE', 'TEST'] as const;

/** Variables of the README's configuration table, expanded. */
function documentedVariables(): string[] {
  const readme = readFileSync('README.md', 'utf8');
  const section = readme.slice(readme.indexOf('\n## Configuration'), readme.indexOf('\n## ', readme.indexOf('\n## Configuration') + 1));
  const names: string[] = [];
  let runnerGroup = false;
  for (const line of section.split('\n')) {
    // The testnet runner's own variables are not the service's: proven below against scripts/testnet.
    if (line.startsWith('| **')) runnerGroup = line.startsWith('| **testnet runner only**');
    if (runnerGroup || !line.startsWith('| `')) continue;
    const [first, , meaning] = line.slice(1).split(' | ');
    const cell = [...first!.matchAll(/`([A-Z0-9_<>]+)`/g)].map((m) => m[1]!);
    const head = cell[0]!;
    const stem = head.includes('>_') ? head.slice(0, head.lastIndexOf('>_') + 2) : '';
    const all = cell.map((n, i) => (i > 0 && n.startsWith('_') && stem ? `${stem}${n.slice(1)}` : n));
    const nets = /EVM networks only/.test(meaning ?? '')
      ? NETS.filter((n) => n === 'ETHEREUM' || n === 'BSC')
      : /not Solana/.test(meaning ?? '')
        ? NETS.filter((n) => n !== 'SOLANA')
        : NETS;
    for (const n of all) {
      for (const net of n.includes('<NET>') ? nets : [undefined]) {
        for (const mode of n.includes('<MODE>') ? MODES : [undefined]) {
          names.push(n.replace('<NET>', net ?? '').replace('<MODE>', mode ?? ''));
        }
      }
    }
  }
  return names;
}

function sourceText(): string {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir)) {
      const p = join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|mjs|js)$/.test(e) && !p.endsWith('.test.ts')) files.push(p);
    }
  };
  for (const d of ['src', 'chains', 'scripts', 'test/support']) walk(d);
  return files.map((f) => `\n//# ${f}\n${readFileSync(f, 'utf8')}`).join('');
}
const SOURCE = sourceText();
/** Whether the service (src/, chains/) uses a loaded field outside the files that load it. */
const usedOutside = (field: string, loaders: string[]): boolean =>
  SOURCE.split('\n//# ').some(
    (chunk) =>
      /^(src|chains)\//.test(chunk) &&
      !loaders.some((l) => chunk.startsWith(`${l}\n`)) &&
      new RegExp(`\\.${field}\\b`).test(chunk.slice(chunk.indexOf('\n'))),
  );

interface Probe {
  /** What the variable feeds, as a comparable value (or the error it causes). */
  read: (env: Env) => unknown;
  sample: string;
  /** Variables the probe needs beside the one under test. */
  base?: Env;
  /** The loaded field and the files that load it: the field must be used elsewhere. */
  field?: string;
  loaders?: string[];
}

const attempt = (f: () => unknown): unknown => {
  try {
    return f();
  } catch (e) {
    return { error: (e as Error).message };
  }
};
const json = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x));

const CONFIG_SAMPLES: Record<string, string> = {
  HOST: '127.0.0.1',
  PORT: '3100',
  ROLES: 'api',
  MIGRATE_ON_START: 'false',
  LOG_LEVEL: 'warn',
  DATABASE_URL: 'postgres://u@db:5432/x',
  DATABASE_POOL_SIZE: '3',
  DATABASE_DIRECT_URL: 'postgres://u@db-direct:5432/x',
  DATABASE_NAMED_STATEMENTS: 'false',
  READ_DATABASE_URL: 'postgres://u@replica:5432/x',
  READ_DATABASE_POOL_SIZE: '2',
  READ_REPLICA_MAX_LAG_MS: '1000',
  REDIS_URL: 'redis://r:6379',
  REDIS_KEY_PREFIX: 'spx',
  PUBLIC_BASE_URL: 'https://pay.example',
  CHECKOUT_BASE_URL: 'https://checkout.example/p',
  DOCS_URL: 'https://docs.example/e',
  AUTH_TIMESTAMP_WINDOW_SECONDS: '120',
  MAX_BODY_BYTES: '4096',
  HTTP_REQUEST_TIMEOUT_MS: '5000',
  SHUTDOWN_GRACE_MS: '2000',
  SESSION_LIFETIME_SECONDS: '120',
  EXPIRY_SWEEP_INTERVAL_MS: '1000',
  RECONCILE_INTERVAL_MS: '60000',
  RATE_SOURCES: 'peg,coinbase',
  RATE_TIMEOUT_MS: '500',
  RATE_CACHE_TTL_MS: '1000',
  RATE_COINBASE_BASE_URL: 'https://cb.example',
  RATE_BINANCE_BASE_URL: 'https://bn.example',
  PAYOUT_CONCURRENCY: '2',
  PAYOUT_POLL_MS: '100',
  PAYOUT_STUCK_AFTER_MS: '5000',
  OUTBOUND_WALLET_LOOKBACK_HOURS: '24',
  PAYOUT_FEE_BUMP_PERCENT: '50',
  PAYOUT_JOB_BUDGET_MS: '5000',
  PAYOUT_SWEEP_INTERVAL_MS: '5000',
  PAYOUT_LOCK_MS: '5000',
  SWEEP_INTERVAL_SECONDS: '3600',
  SWEEP_TICK_MS: '1000',
  NATIVE_PRICE_SOURCES: 'binance',
  TRUST_PROXY: '10.0.0.0/8',
  API_RATE_LIMIT_PER_KEY_PER_SECOND: '7',
  API_RATE_LIMIT_PER_IP_PER_SECOND: '9',
  API_AUTH_FAILURES_PER_IP_PER_MINUTE: '3',
  CHECKOUT_STREAMS_PER_SESSION: '2',
  CHECKOUT_STREAMS_PER_IP: '4',
  CHECKOUT_STREAMS_TOTAL: '8',
  METRICS_HOST: '0.0.0.0',
  CONSOLE_HOST: '0.0.0.0',
  CONSOLE_PORT: '3102',
  CONSOLE_PATH: '/console',
  CONSOLE_SECURE_COOKIES: 'false',
  CONSOLE_IDLE_TIMEOUT_MINUTES: '15',
  CONSOLE_ABSOLUTE_TIMEOUT_HOURS: '8',
  CONSOLE_LOGIN_FAILURES_PER_ACCOUNT: '3',
  CONSOLE_LOGIN_FAILURES_PER_IP: '50',
  CONSOLE_LIVE_INTERVAL_MS: '500',
  CONSOLE_DEMO: 'true',
  CONSOLE_UI_DIR: '/srv/console-ui',
  METRICS_PORT: 'off',
  METRICS_HEAD_INTERVAL_MS: '2000',
  METRICS_BALANCE_INTERVAL_MS: '60000',
};
const WEBHOOK_SAMPLES: Record<string, [string, string]> = {
  WEBHOOK_RETRY_SCHEDULE_MS: ['100,200', 'retrySchedule'],
  WEBHOOK_RETRY_JITTER_RATIO: ['0.5', 'jitterRatio'],
  WEBHOOK_TIMEOUT_MS: ['1000', 'timeoutMs'],
  WEBHOOK_CONCURRENCY: ['5', 'concurrency'],
  WEBHOOK_PER_MERCHANT_CONCURRENCY: ['2', 'perMerchantConcurrency'],
  WEBHOOK_MERCHANT_DEFER_MS: ['50', 'merchantDeferMs'],
  WEBHOOK_ALLOW_PRIVATE_TARGETS_IN_TEST: ['false', 'allowPrivateTargetsInTest'],
  WEBHOOK_SECRET_OVERLAP_HOURS: ['1', 'secretOverlapHours'],
  WEBHOOK_RELAY_BATCH_SIZE: ['10', 'relayBatchSize'],
  WEBHOOK_RELAY_POLL_MS: ['50', 'relayPollMs'],
  WEBHOOK_RECONCILE_INTERVAL_MS: ['500', 'reconcileIntervalMs'],
  WEBHOOK_RECONCILE_GRACE_MS: ['500', 'reconcileGraceMs'],
  WEBHOOK_LOCK_DURATION_MS: ['5000', 'lockDurationMs'],
};
const RETENTION_SAMPLES: Record<string, [string, string]> = {
  RETENTION_WEBHOOK_EVENTS_DAYS: ['off', 'webhookEventsMs'],
  RETENTION_IDEMPOTENCY_HOURS: ['48', 'idempotencyMs'],
  RETENTION_RECONCILE_RUNS_DAYS: ['7', 'reconcileRunsMs'],
  RETENTION_CONSOLE_SESSIONS_DAYS: ['0', 'consoleSessionsMs'],
  RETENTION_INTERVAL_MS: ['0', 'intervalMs'],
  RETENTION_BATCH_ROWS: ['500', 'batchRows'],
};
const SUBSCRIPTION_SAMPLES: Record<string, [string, string]> = {
  SUBSCRIPTION_TICK_MS: ['100', 'tickMs'],
  SUBSCRIPTION_RETRY_DAYS: ['2,4', 'retryOffsetsMs'],
  SUBSCRIPTION_ALLOWANCE_PERIODS: ['6', 'allowancePeriods'],
  SUBSCRIPTION_INCOMPLETE_EXPIRY_HOURS: ['2', 'incompleteExpiryMs'],
};
const CHAIN_FIELDS: Record<string, [string, string]> = {
  RPC_URL: ['http://127.0.0.1:8545', 'rpcUrl'],
  CHAIN_ID: ['5', 'chainId'],
  CONFIRMATIONS: ['3', 'confirmation'],
  POLL_INTERVAL_MS: ['100', 'pollIntervalMs'],
  MAX_BLOCK_RANGE: ['50', 'maxBlockRange'],
  START_BLOCK: ['7', 'startBlock'],
  RPC_TIMEOUT_MS: ['500', 'rpcTimeoutMs'],
  RPC_URLS: ['http://127.0.0.1:8546,http://127.0.0.1:8547', 'rpcUrls'],
  RPC_QUORUM: ['2', 'rpcQuorum'],
  RPC_MAX_LAG_BLOCKS: ['25', 'rpcMaxLagBlocks'],
  EXPLORER_TX_URL: ['https://explorer.example/tx/{tx}', 'explorerTxUrl'],
  // One more look-alike watched (EVM networks only: the README row says so, and TRON and Solana refuse it).
  LOOKALIKE_CONTRACTS: ['USDC.e:0x00000000000000000000000000000000000000bb:6', 'lookalikes'],
};
const TRON_FIELDS: Record<string, [string, string]> = {
  FULL_HOST: ['http://127.0.0.1:9090', 'fullHost'],
  SOLIDITY_HOST: ['http://127.0.0.1:9091', 'solidityHost'],
  API_KEY: ['k', 'apiKey'],
  HISTORY_HOST: ['http://127.0.0.1:9092', 'historyHost'],
  FEE_LIMIT_CEILING_SUN: ['1000000', 'feeLimitCeilingSun'],
  ENERGY_MARGIN_PERCENT: ['5', 'energyMarginPercent'],
};
const SOLANA_FIELDS: Record<string, [string, string]> = {
  RESCAN_SLOTS: ['10', 'rescanSlots'],
  REFERENCE_SCAN_EVERY_POLLS: ['0', 'referenceScanEveryPolls'],
  RPC_CONCURRENCY: ['2', 'rpcConcurrency'],
  COMPUTE_UNIT_LIMIT: ['90000', 'computeUnitLimit'],
  MIN_CU_PRICE: ['5', 'minComputeUnitPrice'],
  MAX_CU_PRICE: ['10', 'maxComputeUnitPrice'],
};
/** A token address each chain family accepts. */
const TOKEN_ADDRESS: Record<string, string> = {
  ETHEREUM: '0x00000000000000000000000000000000000000aa',
  BSC: '0x00000000000000000000000000000000000000aa',
  TRON: 'TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8',
  SOLANA: 'SysvarRent111111111111111111111111111111111',
};

function probeOf(name: string): Probe | undefined {
  if (name in configSchema.shape && CONFIG_SAMPLES[name] !== undefined) {
    const derived = name === 'PUBLIC_BASE_URL' || name === 'CHECKOUT_BASE_URL';
    const field = derived ? 'checkoutBaseUrl' : name === 'DOCS_URL' ? 'docsUrl' : name;
    return {
      read: (env) => attempt(() => (loadConfig({ ...MASTER, ...env }) as Record<string, unknown>)[field]),
      sample: CONFIG_SAMPLES[name]!,
      field,
      loaders: ['src/config.ts'],
    };
  }
  // Transaction mode is refused for a process holding session locks without DATABASE_DIRECT_URL: probed on an API-only one.
  if (name === 'DATABASE_POOL_MODE')
    return {
      read: (env) => attempt(() => loadConfig({ ...MASTER, ROLES: 'api', MIGRATE_ON_START: 'false', ...env }).DATABASE_POOL_MODE),
      sample: 'transaction',
      field: 'DATABASE_POOL_MODE',
      loaders: ['src/config.ts'],
    };
  if (name === 'MASTER_KEY')
    return {
      read: (env) => attempt(() => loadConfig(env).MASTER_KEY.length),
      sample: MASTER.MASTER_KEY,
      field: 'MASTER_KEY',
      loaders: ['src/config.ts'],
    };
  if (WEBHOOK_SAMPLES[name]) {
    const [sample, field] = WEBHOOK_SAMPLES[name];
    return {
      read: (env) => (webhookSettingsFrom(loadConfig({ ...MASTER, ...env })) as unknown as Record<string, unknown>)[field],
      sample,
      field,
      loaders: ['src/webhooks/config.ts'],
    };
  }
  if (RETENTION_SAMPLES[name]) {
    const [sample, field] = RETENTION_SAMPLES[name];
    return {
      read: (env) => (retentionSettingsFrom(loadConfig({ ...MASTER, ...env })) as unknown as Record<string, unknown>)[field],
      sample,
      field,
      loaders: ['src/jobs/retention-settings.ts'],
    };
  }
  if (SUBSCRIPTION_SAMPLES[name]) {
    const [sample, field] = SUBSCRIPTION_SAMPLES[name];
    return {
      read: (env) => (subscriptionSettingsFromEnv(env) as unknown as Record<string, unknown>)[field],
      sample,
      field,
      loaders: ['src/domain/subscription-settings.ts'],
    };
  }
  if (name === 'WATCHER_ADDRESS_RETENTION_DAYS')
    return {
      read: (env) => loadWatcherSettings(env).addressRetentionDays,
      sample: '3',
      field: 'addressRetentionDays',
      loaders: ['src/watcher/config.ts'],
    };
  if (name === 'WATCHER_STANDBY_RETRY_MS')
    return {
      read: (env) => loadWatcherSettings(env).standbyRetryMs,
      sample: '50',
      field: 'standbyRetryMs',
      loaders: ['src/watcher/config.ts'],
    };
  if (name === 'HD_MNEMONIC') return { read: (env) => keyMaterialFromEnv(env).kind, sample: MNEMONIC };
  // A process given the signer's socket asks it (remote) instead of holding keys (none).
  if (name === 'SIGNER_REFUND_LIMIT_PER_HOUR' || name === 'SIGNER_REFUND_LIMIT_PER_DAY')
    return { read: (env) => attempt(() => signerLimitsFrom(env)), sample: '123.5' };
  if (name === 'SIGNER_SWEEP_LIMIT_PER_HOUR' || name === 'SIGNER_SWEEP_LIMIT_PER_DAY')
    return { read: (env) => attempt(() => signerLimitsFrom(env)), sample: '123.5' };
  if (name === 'SIGNER_SWEEP_RECENT_HOURS') return { read: (env) => attempt(() => signerLimitsFrom(env)), sample: '6' };
  if (name === 'SIGNER_SOCKET') return { read: (env) => keyMaterialFromEnv(env).kind, sample: '/tmp/stablepay-signer.sock' };
  if (name === 'HD_PASSPHRASE') {
    return {
      read: (env) =>
        attempt(() =>
          (() => {
            const k = keyMaterialFromEnv(env);
            return k.kind === 'signer' ? k.signer.accountXpub(60, 0) : k.kind;
          })(),
        ),
      sample: 'extra words',
      base: { HD_MNEMONIC: MNEMONIC },
    };
  }
  if (name === 'HD_ACCOUNT_XPUBS') {
    return {
      read: (env) => keyDeriverOf(keyMaterialFromEnv(env)) !== null,
      sample: `60/0=${new MnemonicSigner(MNEMONIC).accountXpub(60, 0)}`,
    };
  }
  if (name === 'HD_ED25519_PREDERIVED_FILE') {
    const file = join(mkdtempSync(join(tmpdir(), 'sp-readme-env-')), 'batch.txt');
    writeFileSync(file, "m/44'/501'/0'/0'/0'=SysvarRent111111111111111111111111111111111\n");
    return { read: (env) => keyMaterialFromEnv(env).kind, sample: file };
  }
  if (name === 'DEVNET_STATE_FILE') return { read: (env) => devnetStateFile(env), sample: '/tmp/devnet-state.json' };

  const chain = /^CHAIN_(ETHEREUM|BSC|TRON|SOLANA)_(LIVE|TEST)_(.+)$/.exec(name);
  if (chain) {
    const [, net, mode, suffix] = chain as unknown as [string, string, 'LIVE' | 'TEST', string];
    const p = `CHAIN_${net}_${mode}_`;
    const rpc = { [`${p}RPC_URL`]: 'http://127.0.0.1:8545' };
    const settings = (env: Env) =>
      loadWatcherSettings(env).chains.find((c) => c.network === net.toLowerCase() && c.mode === mode.toLowerCase());
    const token = /^(USDT|USDC)_(CONTRACT|DECIMALS)$/.exec(suffix);
    if (token) {
      const [, symbol, part] = token;
      const tokens = (env: Env) => attempt(() => settings(env)?.tokens.find((t) => t.symbol === symbol) ?? null);
      return part === 'CONTRACT'
        ? {
            read: tokens,
            sample: TOKEN_ADDRESS[net]!,
            base: { ...rpc, [`${p}${symbol}_DECIMALS`]: '6' },
            field: 'tokens',
            loaders: ['src/watcher/config.ts'],
          }
        : {
            read: tokens,
            sample: '18',
            base: { ...rpc, [`${p}${symbol}_CONTRACT`]: TOKEN_ADDRESS[net] },
            field: 'tokens',
            loaders: ['src/watcher/config.ts'],
          };
    }
    if (CHAIN_FIELDS[suffix]) {
      const [sample, field] = CHAIN_FIELDS[suffix];
      const base =
        suffix === 'RPC_URL' || suffix === 'RPC_URLS'
          ? {}
          : suffix === 'RPC_QUORUM'
            ? { ...rpc, [`${p}RPC_URLS`]: 'http://127.0.0.1:8546' }
            : rpc;
      return {
        read: (env) => attempt(() => json((settings(env) as unknown as Record<string, unknown> | undefined)?.[field] ?? null)),
        sample,
        base,
        field,
        loaders: ['src/watcher/config.ts'],
      };
    }
    if (net === 'TRON' && TRON_FIELDS[suffix]) {
      const [sample, field] = TRON_FIELDS[suffix];
      return {
        read: (env) =>
          json((loadTronExtraSettings(env, mode.toLowerCase() as 'live' | 'test') as unknown as Record<string, unknown>)[field]),
        sample,
        field,
        loaders: ['chains/tron/config.ts'],
      };
    }
    if (net === 'SOLANA' && SOLANA_FIELDS[suffix]) {
      const [sample, field] = SOLANA_FIELDS[suffix];
      return {
        read: (env) =>
          json((loadSolanaExtraSettings(env, mode.toLowerCase() as 'live' | 'test') as Record<string, unknown>)[field] ?? null),
        sample,
        field,
        loaders: ['chains/solana/config.ts'],
      };
    }
  }
  return undefined;
}

/**
 * Variables proven another way: local-demo and test settings read by scripts or the test harness itself (they change
 * where the demo or the tests run, which no unit probe can observe without running them).
 */
const PROVEN_ELSEWHERE: Record<string, string> = {
  // Files must exist to be read: proven with real certificates and seed files there.
  SIGNER_TLS_URL: 'test/integration/signer-tls.test.ts: the endpoint, and a process given it holds no seed',
  SIGNER_TLS_CA_FILE: 'test/integration/signer-tls.test.ts: the CA each end checks the other against',
  SIGNER_TLS_CERT_FILE: "test/integration/signer-tls.test.ts: this end's certificate",
  SIGNER_TLS_KEY_FILE: "test/integration/signer-tls.test.ts: this end's key, never echoed",
  SIGNER_TLS_LISTEN_HOST: 'test/integration/signer-tls.test.ts: where the signer listens',
  HD_MNEMONIC_FILE: 'test/integration/signer-tls.test.ts: the signer role reads the seed from its file',
  DEV_DATABASE_URL: 'scripts/dev.ts: the demo database (test/e2e/checkout-dev.test.ts runs npm run dev)',
  DEV_REDIS_KEY_PREFIX: 'scripts/dev.ts: the demo Redis prefix',
  SOLANA_FAKE_RPC_PORT: 'scripts/devnet/solana-rpc/main.ts: the port it listens on',
  SOLANA_FAKE_SLOT_MS: 'scripts/devnet/solana-rpc/main.ts: its slot clock',
  SOLANA_FAKE_MINTS: 'scripts/devnet/solana-rpc/main.ts: whether it mints at the mainnet addresses',
  TEST_PG_ADMIN_URL: 'test/support/env.ts: every test database is made through it',
  TEST_REDIS_URL: 'test/support/env.ts: every test Redis connection',
  SP_FAILPOINTS:
    'src/outbound/failpoints.ts: test/integration/refunds-crash.test.ts and subscriptions-crash.test.ts kill a worker through it',
  SP_FAILPOINTS_SWEEP_STEP:
    'src/treasury/runner.ts: test/integration/treasury-sweep-faults.test.ts kills `sweep run` at the top-up or at the transfer through it',
};

describe("README's configuration table", () => {
  const names = documentedVariables();

  it('lists every registry network as a <NET> value, and the CONFIRMATIONS forms (issue 37)', () => {
    const readme = readFileSync('README.md', 'utf8');
    const row = readme.split('\n').find((l) => l.startsWith('| **chains**: `<NET>`'))!;
    const listed = [...row.slice(0, row.indexOf('<MODE>')).matchAll(/`([A-Z0-9]+)`/g)].map((m) => m[1]);
    expect(listed).toEqual(REGISTRY_NETWORKS.map((n) => n.id.toUpperCase()));
    const confirmations = readme.split('\n').find((l) => l.startsWith('| `CHAIN_<NET>_<MODE>_CONFIRMATIONS`'))!;
    for (const form of ['`<n>`', '`finalized`', '`safe`', '`finalized+<n>`', '`safe+<n>`']) expect(confirmations).toContain(form);
  });

  it('is parsed with every chain variable expanded', () => {
    expect(names.length).toBeGreaterThan(100);
    expect(names).toContain('CHAIN_SOLANA_TEST_RESCAN_SLOTS');
    expect(names).toContain('CHAIN_TRON_LIVE_SOLIDITY_HOST');
    expect(names).toContain('SESSION_LIFETIME_SECONDS');
    expect(new Set(names).size).toBe(names.length);
  });

  it('names only variables the code reads', () => {
    const unread = names.filter((n) => {
      const chain = /^CHAIN_[A-Z]+_(?:LIVE|TEST)_(.+)$/.exec(n);
      return chain ? !new RegExp(`[\`'"_}]${chain[1]}\\b`).test(SOURCE) : !new RegExp(`\\b${n}\\b`).test(SOURCE);
    });
    expect(unread).toEqual([]);
  });

  it('names only variables that change the configuration or behaviour', () => {
    const failures: string[] = [];
    for (const name of names) {
      if (PROVEN_ELSEWHERE[name]) {
        const file = PROVEN_ELSEWHERE[name].split(':')[0]!;
        if (!readFileSync(file, 'utf8').includes(name)) failures.push(`${name}: not in ${file}`);
        continue;
      }
      const probe = probeOf(name);
      if (!probe) {
        failures.push(`${name}: no probe`);
        continue;
      }
      const without = json(probe.read({ ...probe.base }));
      const withIt = json(probe.read({ ...probe.base, [name]: probe.sample }));
      if (without === withIt) failures.push(`${name}: ${withIt} with or without it`);
      if (/"error"/.test(withIt)) failures.push(`${name}=${probe.sample} refused: ${withIt}`);
      if (probe.field && !usedOutside(probe.field, probe.loaders ?? []))
        failures.push(`${name}: ${probe.field} is loaded but used nowhere else`);
    }
    expect(failures).toEqual([]);
  });
});

/** Each testnet profile's environment prefix (SEPOLIA, ..., TRON_NILE, BASE_SEPOLIA, ...) → its name, from the registry. */
const PROFILE_PREFIXES: Record<string, string> = Object.fromEntries(PROFILE_NAMES.map((n) => [publicProfile(n, {}).envPrefix, n]));

/** The testnet runner's variables (README group "testnet runner only"), `<P>` and `<TOKEN>` expanded per profile. */
function runnerVariables(): string[] {
  const readme = readFileSync('README.md', 'utf8');
  const start = readme.indexOf('| **testnet runner only**');
  const rows = readme
    .slice(start, readme.indexOf('\n| **', start + 1))
    .split('\n')
    .slice(1);
  const prefixes = Object.keys(PROFILE_PREFIXES);
  const names = new Set<string>();
  for (const row of rows) {
    for (const m of row.split(' | ')[0]!.matchAll(/`([A-Z0-9_<>]+)`/g)) {
      const n = m[1]!;
      for (const p of n.includes('<P>') ? prefixes : [undefined]) {
        for (const t of n.includes('<TOKEN>') ? ['USDT', 'USDC'] : [undefined])
          names.add(n.replace('<P>', p ?? '').replace('<TOKEN>', t ?? ''));
      }
    }
  }
  return [...names].filter((n) => !n.startsWith('_'));
}

describe("README's testnet runner variables", () => {
  const RUNNER = readdirSync('scripts/testnet')
    .map((f) => readFileSync(join('scripts/testnet', f), 'utf8'))
    .join('\n');
  const PREFIX = PROFILE_PREFIXES;
  // Combinations the README's row names as not applying: Nile's RPC is its FULL_HOST, Solana has a genesis hash and
  // no chain id.
  const NOT_APPLICABLE = new Set(['TRON_NILE_RPC_URL', 'SOLANA_DEVNET_CHAIN_ID']);
  const names = runnerVariables().filter((n) => !NOT_APPLICABLE.has(n));
  const split = (n: string) => {
    const prefix = Object.keys(PREFIX)
      .sort((a, b) => b.length - a.length)
      .find((p) => n.startsWith(`${p}_`));
    return prefix ? { prefix, suffix: n.slice(prefix.length + 1) } : null;
  };

  it('are all read by the runner', () => {
    expect(names).toContain('SEPOLIA_PAYER_KEY');
    expect(names).toContain('BSC_TESTNET_USDC_DECIMALS');
    expect(names).toContain('BASE_SEPOLIA_PAYER_KEY');
    expect(names).toContain('POLYGON_AMOY_USDC');
    const unread = names.filter((n) => {
      const s = split(n);
      if (!s) return !RUNNER.includes(n);
      // Per-profile names are read as `${prefix}_SUFFIX` (tokens as `${prefix}_${symbol}` and `_${symbol}_DECIMALS`).
      const token = /^(USDT|USDC)(_DECIMALS)?$/.exec(s.suffix);
      if (token) return !RUNNER.includes(token[2] ? '_${symbol}_DECIMALS' : '`${prefix}_${symbol}`');
      return !RUNNER.includes(`_${s.suffix}\``) && !RUNNER.includes(n);
    });
    expect(unread).toEqual([]);
  });

  it('that override a network profile change that profile', () => {
    const samples: Array<[RegExp, string]> = [
      [/_RPC_URL$|_FULL_HOST$/, 'http://127.0.0.1:1'],
      [/_CHAIN_ID$/, '12345'],
      [/_GENESIS_HASH$/, '11111111111111111111111111111111'],
      [/_DECIMALS$/, '9'],
      [/_(USDT|USDC)$/, '0x00000000000000000000000000000000000000a1'],
      [/_FUND_GAS$|_FEE_RESERVE$/, '0.125'],
    ];
    const unchanged: string[] = [];
    for (const name of names) {
      const s = split(name);
      const sample = samples.find(([re]) => re.test(name))?.[1];
      if (!s || !sample) continue;
      // A token's decimals apply once the token has an address (Sepolia's and Devnet's USDT have none by default).
      const base: Env = /_DECIMALS$/.test(name) ? { [name.replace(/_DECIMALS$/, '')]: '0x00000000000000000000000000000000000000a1' } : {};
      const probe = (env: Env) => json(attempt(() => publicProfile(PREFIX[s.prefix]!, env)));
      if (probe(base) === probe({ ...base, [name]: sample })) unchanged.push(name);
    }
    expect(unchanged).toEqual([]);
  });
});
