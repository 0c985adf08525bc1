import { spawnSync } from 'node:child_process';
// `npm run dev`: the whole service on local chains, for a first look and for development.
// Starts an Anvil node for every EVM network of the registry (chains/registry.ts), each charging fees as its network
// does (scripts/devnet/evm.ts: OP-stack L1 data fee, Arbitrum's fast blocks, plain gas) with test USDT and USDC at the
// network's live decimals, the LiteSVM Solana endpoint, TRON as the tests run it (the FAKE java-tron
// wallet API over another Anvil node with Nile's chain id, scripts/devnet/tron.ts), a fresh demo database, the service with
// all roles, a demo merchant (its key and secret printed), a webhook receiver that prints what it gets, and one
// demo session; the merchant's refund hot wallets are funded on every chain, the operator's gas stations on every EVM
// chain, and the operator settings go into the state file the CLI reads. The seed is held by a signer process of its own (ROLES=signer, docs/signer.md): the
// service and the operator's CLI ask it over a Unix socket, as in production. Ctrl-C stops everything it started and deletes the run's Redis keys. See docs/checkout.md
// ("The local demo").
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { NETWORKS } from '../chains/registry.js';
import { devnetSolanaPayer, devnetStateFile, type DevnetState } from '../src/cli/devnet.js';
import { loadConfig } from '../src/config.js';
import { createDb } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createMerchant } from '../src/ledger/merchants/merchants.js';
import { createLogger, type LogLevel } from '../src/logger.js';
import { start, type RunningService } from '../src/main.js';
import { SecretBox } from '../src/security/secret-box.js';
import { DEMO_MERCHANT_EMAIL, DEMO_OPERATOR_EMAIL, DEMO_PASSWORD, ensureDemoConsoleUsers } from '../src/operations/console-demo.js';
import { builtUiDir } from '../src/start/console.js';
import { loadChainSettings } from '../src/watcher/config.js';
import { createChainAdapter } from '../src/watcher/adapter-factory.js';
import { keyDeriverOf, keyMaterialFromEnv } from '../src/signer/from-env.js';
import { Redis } from 'ioredis';
import { fundRefundWallets, networkOfFamily, type DevSolana } from './devnet/fund.js';
import { chainEnvPrefix } from '../chains/env-names.js';
import { DEMO_MAX_FEE_BPS, setUpDemoOperator } from './devnet/operator-setup.js';
import { freePort } from '../test/support/anvil.js';
import { startFakeTicker } from '../test/support/fake-ticker.js';
import { chainEnv, evmNetworks, feeModelText, startDevEvmChain, type DevEvmChain } from './devnet/evm.js';
import { startSignerProcess } from './devnet/signer-process.js';
import { startDevTronChain, tronChainEnv } from './devnet/tron.js';

const TEST_MNEMONIC = 'test test test test test test test test test test test junk';
const SOLANA_USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const SOLANA_USDT = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';
/** The operator CLI's fixed prices of the networks' fee coins (a fake ticker; sweeps price their fees with them). */
const NATIVE_PRICES: Record<string, string> = { ETH: '3000.00', BNB: '600.00', TRX: '0.25', SOL: '150.00', POL: '0.50' };

const stops: Array<{ name: string; stop: () => Promise<void> }> = [];
const say = (line = '') => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const env = process.env;
  const devDbUrl = env.DEV_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/stablepay_dev';
  const host = env.HOST ?? '127.0.0.1';
  const port = env.PORT ? Number(env.PORT) : await portOr(3000);
  const publicBase = env.PUBLIC_BASE_URL ?? `http://localhost:${port}`;

  say('Starting local chains…');
  // One chain per EVM network of the registry, and TRON; a chain that fails to start stops the others.
  const starting = [...evmNetworks().map((e) => startDevEvmChain(e)), startDevTronChain()] as const;
  const settled = await Promise.allSettled(starting);
  const evm: DevEvmChain[] = [];
  for (const r of settled.slice(0, -1))
    if (r.status === 'fulfilled') {
      const c = r.value as DevEvmChain;
      evm.push(c);
      stops.push({ name: `anvil ${c.network}`, stop: () => c.node.stop() });
    }
  const tronStart = settled.at(-1)!;
  if (tronStart.status === 'fulfilled') {
    const t = tronStart.value as Awaited<ReturnType<typeof startDevTronChain>>;
    stops.push({ name: 'tron (fake java-tron, anvil)', stop: () => t.stop() });
  }
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  const tron = (tronStart as PromiseFulfilledResult<Awaited<ReturnType<typeof startDevTronChain>>>).value;
  const { env: solanaEnv, rpc: solanaRpc } = await startSolana();

  // The chains are new on every run, so is the demo database: a cursor from an earlier run would not match them.
  await recreateDatabase(devDbUrl);
  {
    const migrating = createDb(devDbUrl, 1);
    await migrateToLatest(migrating);
    await migrating.destroy();
  }

  const webhooks = await startWebhookPrinter();
  // The signer's socket: a directory only this user can open, removed on exit.
  const socketDir = mkdtempSync(join(tmpdir(), 'stablepay-dev-signer-'));
  stops.push({ name: 'signer socket', stop: async () => rmSync(socketDir, { recursive: true, force: true }) });
  const serviceEnv: Record<string, string | undefined> = {
    ...env,
    NODE_ENV: 'development',
    DATABASE_URL: devDbUrl,
    REDIS_KEY_PREFIX: env.DEV_REDIS_KEY_PREFIX ?? `sp_dev_${randomBytes(3).toString('hex')}`,
    MASTER_KEY: randomBytes(32).toString('hex'),
    // No key in the service: the signer process below holds the seed, the service asks it (docs/signer.md).
    HD_MNEMONIC: undefined,
    HD_PASSPHRASE: undefined,
    SIGNER_SOCKET: join(socketDir, 'signer.sock'),
    SIGNER_TLS_URL: undefined,
    HOST: host,
    PORT: String(port),
    PUBLIC_BASE_URL: publicBase,
    CHECKOUT_BASE_URL: env.CHECKOUT_BASE_URL,
    LOG_LEVEL: env.LOG_LEVEL ?? 'warn',
    // A free port unless set: a second demo, or a service already on 9464, must not make the demo log an error.
    METRICS_PORT: env.METRICS_PORT ?? String(await freePort()),
    // The web console on its own port, plain http on localhost, the demo's users allowed (docs/console.md, "Demo").
    ROLES: env.ROLES ?? 'api,worker,watcher,console',
    CONSOLE_HOST: host,
    CONSOLE_PORT: env.CONSOLE_PORT ?? String(await portOr(3001)),
    CONSOLE_SECURE_COOKIES: 'false',
    CONSOLE_DEMO: 'true',
    EXPIRY_SWEEP_INTERVAL_MS: '2000',
    WEBHOOK_RELAY_POLL_MS: '250',
    ...Object.assign({}, ...evm.map(chainEnv)),
    ...tronChainEnv(tron),
    ...solanaEnv,
  };
  const config = loadConfig(serviceEnv);
  ensureConsoleBuilt();
  say('Starting the signer (the only process with the seed)…');
  const signer = await startSignerProcess({ ...serviceEnv, HD_MNEMONIC: TEST_MNEMONIC }, serviceEnv.SIGNER_SOCKET!);
  stops.push({ name: 'signer', stop: () => signer.stop() });
  // Stopped after the service (stops run in reverse): every key of this run's random prefix goes, queues and nonces.
  stops.push({ name: 'redis keys', stop: () => deleteRedisKeys(config.REDIS_URL, config.REDIS_KEY_PREFIX) });
  const service: RunningService = await start(config, serviceEnv, createLogger(config.LOG_LEVEL as LogLevel));
  stops.push({ name: 'service', stop: () => service.stop() });
  const baseUrl = `http://localhost:${service.port}`;

  const db = createDb(devDbUrl, 2);
  const merchant = await createMerchant(db, new SecretBox(serviceEnv.MASTER_KEY!), { name: 'Demo Shop', webhookUrl: webhooks.url });
  const { account_index } = await db
    .selectFrom('merchant_hd_accounts')
    .select('account_index')
    .where('merchant_id', '=', merchant.merchantId)
    .where('mode', '=', 'test')
    .executeTakeFirstOrThrow();
  // Refunds (and Solana deposit-account setup, which the refund wallet pays for) work out of the box: gas and tokens.
  const keys = keyDeriverOf(keyMaterialFromEnv(serviceEnv))!;
  const funded = await fundRefundWallets({ env: serviceEnv, keys, account: account_index, evm, solana: solanaRpc, tron });
  // Sweeps from the console or the CLI: gas stations funded, demo sweep policies (scripts/devnet/operator-setup.ts).
  const { stations } = await setUpDemoOperator({ env: serviceEnv, keys, evm, db });
  webhooks.secret = merchant.webhookSecret;
  const demoConsole = await ensureDemoConsoleUsers({ db, box: new SecretBox(serviceEnv.MASTER_KEY!) }, merchant.merchantId);
  await db.destroy();

  const session = await createDemoSession(baseUrl, merchant.testKey.key, merchant.testKey.secret);
  // Sweeps price their fees with the native coins' prices (docs/treasury.md, Policy); no exchange is reached from the
  // demo: the operator CLI's prices come from a fake of Coinbase's public ticker with fixed prices (the service's own
  // rates are untouched).
  const ticker = await startFakeTicker({
    coinbaseRates: Object.fromEntries(
      [...new Set(NETWORKS.map((n) => n.nativeCoin.symbol as string))].map((coin) => {
        const p = NATIVE_PRICES[coin];
        if (!p) throw new Error(`the demo has no price for ${coin}: add it to NATIVE_PRICES`);
        return [coin, { USDT: p, USDC: p }];
      }),
    ),
  });
  stops.push({ name: 'price ticker', stop: () => ticker.close() });
  // The runner of scripts/testnet (`npm run testnet -- --local`) acts as the demo's operator: it creates its own
  // merchant and funds that merchant's wallets, with the demo's settings. Demo-only secrets (a random MASTER_KEY, the
  // public test mnemonic), in a file only this user can read, removed on exit.
  const operatorEnv = {
    ...Object.fromEntries(
      Object.entries(serviceEnv).filter(
        (e): e is [string, string] =>
          e[1] !== undefined &&
          (/^(DATABASE_URL|MASTER_KEY|SIGNER_SOCKET|REDIS_URL|REDIS_KEY_PREFIX)$/.test(e[0]) || e[0].startsWith('CHAIN_')),
      ),
    ),
    NATIVE_PRICE_SOURCES: 'coinbase',
    RATE_COINBASE_BASE_URL: ticker.url,
  };
  const solanaRpcUrl = solanaEnv[`${chainEnvPrefix(networkOfFamily('solana'), 'test')}RPC_URL`];
  const state: DevnetState & { operatorEnv: Record<string, string> } = {
    baseUrl,
    checkoutBaseUrl: config.checkoutBaseUrl,
    pid: process.pid,
    evm: Object.fromEntries(evm.map((c: DevEvmChain) => [c.network, { rpcUrl: c.node.url, chainId: c.chainId, tokens: c.tokens }])),
    ...(solanaRpcUrl
      ? {
          solana: {
            rpcUrl: solanaRpcUrl,
            tokens: { USDC: { address: SOLANA_USDC, decimals: 6 }, USDT: { address: SOLANA_USDT, decimals: 6 } },
          },
        }
      : {}),
    tron: {
      fullHost: tron.fake.url,
      rpcUrl: tron.node.url,
      chainId: tron.chainId,
      faucetUrl: tron.faucetUrl,
      tokens: tron.tokens,
    },
    operatorEnv,
  };
  const stateFile = devnetStateFile(env);
  mkdirSync(dirname(stateFile), { recursive: true, mode: 0o700 });
  writeFileSync(stateFile, JSON.stringify(state, null, 2), { mode: 0o600 });
  stops.push({ name: 'state file', stop: async () => rmSync(stateFile, { force: true }) });

  say();
  say('stablepay is running on local chains.');
  const width = Math.max(...NETWORKS.map((n) => n.id.length));
  for (const c of evm) {
    const tokens = Object.entries(c.tokens).map(([s, t]) => `${s} ${t.address}`);
    say(
      `  ${c.network.padEnd(width)} (Anvil, chain ${c.chainId}, ${c.blockTimeSec} s blocks, ${feeModelText(c.entry)}): ${c.node.url}  ${tokens.join('  ')}`,
    );
  }
  say(`  ${networkOfFamily('solana').padEnd(width)} (LiteSVM): ${solanaRpcUrl ?? 'not started'}`);
  say(
    `  ${networkOfFamily('tron').padEnd(width)} (FAKE java-tron wallet API, Nile-like, chain ${tron.chainId}): ${tron.fake.url}  JSON-RPC ${tron.node.url}`,
  );
  say(`  ${''.padEnd(width)} USDT ${tron.tokens.USDT.address}  USDC ${tron.tokens.USDC.address}  (a documented fake: docs/tron.md)`);
  say(`  API:      ${baseUrl}/api/v1   Webhooks are printed here (receiver ${webhooks.url})`);
  say(`  Signer:   pid ${signer.pid} on ${signer.socketPath}: the only process with the seed; the service and the CLI ask it`);
  say();
  say(`Console:  http://localhost:${service.consolePort}/  (demo users, refused outside npm run dev)`);
  say(`  Operator:      ${DEMO_OPERATOR_EMAIL} / ${DEMO_PASSWORD}, then the code of \`npm run -s cli -- console demo-code\``);
  say(`                 (or add its TOTP secret ${demoConsole.operatorTotpSecret} to an authenticator app)`);
  say(`  Merchant user: ${DEMO_MERCHANT_EMAIL} / ${DEMO_PASSWORD}  (Demo Shop only)`);
  say();
  say('Demo merchant (test mode):');
  say(`  Merchant id: ${merchant.merchantId}`);
  say(`  API key:     ${merchant.testKey.key}`);
  say(`  API secret:  ${merchant.testKey.secret}`);
  say();
  say('Create a session with a signed request:');
  say(signedCurlSnippet(baseUrl, merchant.testKey.key, merchant.testKey.secret));
  say();
  say(`Demo session id: ${session.id}`);
  say(`Demo session page: ${session.url}`);
  const payable = [...evm.map((c) => c.network), ...(solanaRpc ? [networkOfFamily('solana')] : []), networkOfFamily('tron')];
  say(`Pay it from a funded local wallet: npm run -s cli -- devnet pay ${session.id} --network ${payable[0]} --token USDT`);
  say(`  (--network ${payable.join('|')}; --token USDT|USDC where the network has it)`);
  say();
  say(
    `Sweeps: gas stations funded and test-mode policies set (minimum 1.00, fees up to ${DEMO_MAX_FEE_BPS / 100} %) on ${stations.join(', ')};`,
  );
  say('  no treasury set: a sweep goes to the refunds hot wallet. npm run -s cli -- sweep plan --mode test, or the console.');
  say(`Refund wallets funded (gas and tokens): ${funded.join(', ')}. Refund 5.00 USDT of the paid demo session:`);
  say(
    signedCurlSnippet(
      baseUrl,
      merchant.testKey.key,
      merchant.testKey.secret,
      '/api/v1/refunds/create',
      `{"session_id":"${session.id}","refund_id":"demo-refund-'"$(date +%s)"'","amount":500,"currency":"USDT"}`,
    ),
  );
  say();
  say("Operator CLI (it uses this demo's settings while it runs): npm run -s cli -- payouts wallets");
  say();
  say('Press Ctrl-C to stop everything.');
}

async function startSolana(): Promise<{ env: Record<string, string>; rpc?: DevSolana }> {
  try {
    const { startFakeSolanaRpc } = await import('./devnet/solana-rpc/rpc-server.js');
    const rpc = await startFakeSolanaRpc({ slotIntervalMs: 400 });
    stops.push({ name: 'solana', stop: () => rpc.close() });
    const payer = devnetSolanaPayer().publicKey.toBase58();
    rpc.validator.airdrop(payer, 100_000_000_000n);
    for (const mint of [SOLANA_USDC, SOLANA_USDT]) {
      rpc.validator.createMint({ address: mint, decimals: 6 });
      rpc.validator.setTokenAccount({ mint, owner: payer, amount: 1_000_000n * 1_000_000n });
    }
    const p = chainEnvPrefix(networkOfFamily('solana'), 'test');
    const env: Record<string, string> = {
      [`${p}RPC_URL`]: rpc.url,
      [`${p}CONFIRMATIONS`]: '1',
      [`${p}POLL_INTERVAL_MS`]: '1000',
      [`${p}USDC_CONTRACT`]: SOLANA_USDC,
      [`${p}USDC_DECIMALS`]: '6',
      [`${p}USDT_CONTRACT`]: SOLANA_USDT,
      [`${p}USDT_DECIMALS`]: '6',
    };
    // Only offered when this build's Solana adapter accepts the endpoint.
    const settings = loadChainSettings(env, networkOfFamily('solana'), 'test');
    if (settings) await createChainAdapter(settings, env).verifyTokens();
    return { env, rpc: { validator: rpc.validator, mints: [SOLANA_USDC, SOLANA_USDT] } };
  } catch (err) {
    say(`  (Solana endpoint not started: ${(err as Error).message})`);
    return { env: {} };
  }
}

async function recreateDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`DEV_DATABASE_URL: database name ${name} must be [a-z0-9_]`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const c = new pg.Client({ connectionString: admin.toString() });
  await c.connect();
  try {
    await c.query(`drop database if exists ${name} with (force)`);
    await c.query(`create database ${name}`);
  } finally {
    await c.end();
  }
}

/** Prints each webhook it receives, with the result of checking its signature. */
async function startWebhookPrinter(): Promise<{ url: string; secret: string }> {
  const out = { url: '', secret: '' };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const ts = String(req.headers['x-service-timestamp'] ?? '');
      const nonce = String(req.headers['x-service-nonce'] ?? '');
      const expected = createHmac('sha256', out.secret).update(`${ts}.${nonce}.${body}`).digest('hex');
      const ok = expected === req.headers['x-service-signature'];
      say(`webhook ${req.headers['x-service-event-type']} (signature ${ok ? 'valid' : 'INVALID'}): ${body}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  stops.push({
    name: 'webhook receiver',
    stop: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  });
  out.url = `http://127.0.0.1:${port}/webhooks`;
  return out;
}

async function createDemoSession(baseUrl: string, key: string, secret: string): Promise<{ id: string; url: string }> {
  const body = JSON.stringify({
    amount: '12.34',
    currency: 'USD',
    order_id: `demo-${Date.now()}`,
    description: 'Demo order',
    line_items: [
      { price_data: { currency: 'USD', unit_amount: '5.00', product_data: { name: 'Coffee beans', description: '250 g' } }, quantity: 2 },
      { price_data: { currency: 'USD', unit_amount: '1.34', product_data: { name: 'Sticker' } }, quantity: 1 },
    ],
    tax_amount: '0.00',
    shipping_amount: '1.00',
  });
  const ts = String(Math.floor(Date.now() / 1000));
  const nonce = randomUUID();
  const signature = createHmac('sha256', secret).update(`${ts}.${nonce}.${body}`).digest('hex');
  const res = await fetch(`${baseUrl}/api/v1/checkout/sessions/create`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'x-service-timestamp': ts,
      'x-service-nonce': nonce,
      'x-service-signature': signature,
    },
    body,
  });
  const json = (await res.json()) as { id: string; url: string };
  if (res.status !== 200) throw new Error(`demo session refused: ${JSON.stringify(json)}`);
  return json;
}

async function deleteRedisKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 2 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** A shell snippet that signs as interface.md says: hex(HMAC-SHA256(secret, "<timestamp>.<nonce>.<body>")). */
function signedCurlSnippet(
  baseUrl: string,
  key: string,
  secret: string,
  path = '/api/v1/checkout/sessions/create',
  body = '{"amount":"25.00","currency":"USD","order_id":"order-\'"$(date +%s)"\'","success_url":"https://example.com/thanks"}',
): string {
  return [
    `  KEY='${key}' SECRET='${secret}'`,
    `  BODY='${body}'`,
    `  TS=$(date +%s) NONCE=$(cat /proc/sys/kernel/random/uuid 2>/dev/null || uuidgen)`,
    `  SIG=$(printf '%s' "$TS.$NONCE.$BODY" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.*= //')`,
    `  curl -s ${baseUrl}${path} -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \\`,
    `    -H "X-Service-Timestamp: $TS" -H "X-Service-Nonce: $NONCE" -H "X-Service-Signature: $SIG" -d "$BODY"`,
  ].join('\n');
}

async function portOr(preferred: number): Promise<number> {
  const free = await new Promise<boolean>((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(preferred, '127.0.0.1', () => s.close(() => resolve(true)));
  });
  return free ? preferred : freePort();
}

/** When the stop began: a signal within FORCE_AFTER_MS of it is the same Ctrl-C again; a later one forces the exit. */
const stop = { since: 0 };
const FORCE_AFTER_MS = 3_000;
async function shutdown(code: number): Promise<never> {
  if (stop.since !== 0) {
    // One Ctrl-C arrives more than once (the terminal signals the whole group and npm forwards it to its script).
    if (Date.now() - stop.since < FORCE_AFTER_MS) return new Promise<never>(() => {});
    process.stderr.write('Forced exit: what was not stopped yet may still run.\n');
    process.exit(130);
  }
  stop.since = Date.now();
  say('Stopping… (Ctrl-C again, after a few seconds, forces the exit)');
  for (const s of stops.reverse()) {
    try {
      await s.stop();
    } catch (err) {
      process.stderr.write(`stopping ${s.name} failed: ${(err as Error).message}\n`);
    }
  }
  say('Stopped.');
  process.exit(code);
}

process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));
main().catch((err: unknown) => {
  process.stderr.write(`npm run dev failed: ${(err as Error).stack ?? String(err)}\n`);
  void shutdown(1);
});

/** The console's app is built once (dist/console-ui); a checkout that never ran the build gets it here (a few seconds). */
function ensureConsoleBuilt(): void {
  if (builtUiDir()) return;
  say('Building the console (npm run build:console)…');
  const r = spawnSync('npm', ['run', '-s', 'build:console'], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error('npm run build:console failed (above)');
}
