import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import jsQRModule from 'jsqr';
import { chromium, type BrowserContext } from 'playwright-core';
import { PNG } from 'pngjs';
import { loadConfig } from '../../src/config.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { createLogger } from '../../src/logger.js';
import { start, type RunningService } from '../../src/main.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { TEST_MASTER_KEY } from '../support/api-harness.js';
import { freePort, startAnvil, type AnvilNode } from '../support/anvil.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { RATE_LIMITS_OFF_ENV, REDIS_URL } from '../support/env.js';
import { TEST_MNEMONIC, deployTokens, fund, walletAt, type DeployedToken } from '../support/evm-tokens/scenario.js';
import { SignedClient } from '../support/signed-client.js';
import { listenOnLoopback } from '../support/listen.js';

// The whole service as main.ts starts it (all roles) over Anvil standing in for Ethereum, a merchant, a local
// "merchant site" that receives the success redirect, and headless Chromium (Debian's package, via playwright-core).

export const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'checkout');
export const CONFIRMATIONS = 2;
export const EXPLORER_TX_URL = 'https://sepolia.etherscan.io/tx/{tx}';

export interface CheckoutStack {
  t: TestDatabase;
  node: AnvilNode;
  usdt: DeployedToken;
  usdc: DeployedToken;
  service: RunningService;
  base: string;
  shop: SignedClient;
  merchantId: string;
  /** A local site standing in for the merchant's success and cancel pages. */
  site: { url: string; hits: string[] };
  payer: ReturnType<typeof walletAt>;
  stop(): Promise<void>;
}

export async function startCheckoutStack(): Promise<CheckoutStack> {
  const prefix = `sp_co_${randomBytes(4).toString('hex')}`;
  const [t, node, port] = await Promise.all([createTestDatabase(), startAnvil({ chainId: 31337 }), freePort()]);
  const [usdt, usdc] = (await deployTokens(node, [
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
    { symbol: 'USDC', shape: 'fiat', decimals: 6 },
  ])) as [DeployedToken, DeployedToken];
  const env = {
    ...RATE_LIMITS_OFF_ENV,
    MASTER_KEY: TEST_MASTER_KEY,
    DATABASE_URL: t.url,
    REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: (process.env.E2E_LOG ?? 'silent') as 'silent',
    EXPIRY_SWEEP_INTERVAL_MS: '300',
    HD_MNEMONIC: TEST_MNEMONIC,
    CHAIN_ETHEREUM_TEST_RPC_URL: node.url,
    CHAIN_ETHEREUM_TEST_CHAIN_ID: '31337',
    CHAIN_ETHEREUM_TEST_CONFIRMATIONS: String(CONFIRMATIONS),
    CHAIN_ETHEREUM_TEST_POLL_INTERVAL_MS: '200',
    CHAIN_ETHEREUM_TEST_USDT_CONTRACT: usdt.address,
    CHAIN_ETHEREUM_TEST_USDT_DECIMALS: '6',
    CHAIN_ETHEREUM_TEST_USDC_CONTRACT: usdc.address,
    CHAIN_ETHEREUM_TEST_USDC_DECIMALS: '6',
    // Anvil has no explorer: the paid page's links take this template (chain id 31337 has no default).
    CHAIN_ETHEREUM_TEST_EXPLORER_TX_URL: EXPLORER_TX_URL,
  };
  const service = await start(loadConfig(env), env, createLogger(env.LOG_LEVEL));
  const base = `http://127.0.0.1:${service.port}`;
  const m = await createMerchant(t.db, new SecretBox(TEST_MASTER_KEY), { name: 'Café Ω & Co' });
  const shop = new SignedClient(base, { key: m.testKey.key, secret: m.testKey.secret });
  const site = await startMerchantSite();
  const payer = walletAt(3, node.provider);
  await fund(usdt, payer.address, 1_000_000_000n);
  await fund(usdc, payer.address, 1_000_000_000n);
  return {
    t,
    node,
    usdt,
    usdc,
    service,
    base,
    shop,
    merchantId: m.merchantId,
    site: { url: site.url, hits: site.hits },
    payer,
    async stop() {
      await service.stop().catch(() => {});
      await node.stop();
      site.server.closeAllConnections();
      await new Promise<void>((r) => site.server.close(() => r()));
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
      await t.destroy();
    },
  };
}

async function startMerchantSite(): Promise<{ server: Server; url: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(`<!doctype html><title>Merchant</title><h1>Merchant page ${req.url}</h1>`);
  });
  const port = await listenOnLoopback(server);
  return { server, url: `http://127.0.0.1:${port}`, hits };
}

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Headless Chromium with a fresh profile (its own --user-data-dir), removed on close. */
export async function launchBrowser(locale = 'en-US'): Promise<BrowserContext & { dispose(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'sp-chromium-'));
  const ctx = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
    locale,
    viewport: { width: 390, height: 844 }, // a phone: the page is mobile first
    deviceScaleFactor: 2,
  });
  // Every wait of a page (navigation, locators, screenshots) fails by itself, naming what it waited for, well inside
  // the test's own 60 s: a slow step on a loaded machine reports itself instead of a bare "test timed out".
  ctx.setDefaultTimeout(20_000);
  return Object.assign(ctx, {
    async dispose() {
      await ctx.close();
      rmSync(dir, { recursive: true, force: true });
    },
  });
}

export function artifact(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  return join(ARTIFACTS, name);
}

// jsqr is CommonJS whose types declare a default export: under NodeNext the import is the module object in types
// and the function at run time. Take whichever is callable.
type JsQr = typeof jsQRModule.default;
const jsQR: JsQr = ((jsQRModule as unknown as { default?: JsQr }).default ?? jsQRModule) as unknown as JsQr;

/** Decodes the QR code in a PNG screenshot. */
export function decodeQr(png: Buffer): string | null {
  const img = PNG.sync.read(png);
  const code = jsQR(new Uint8ClampedArray(img.data.buffer, img.data.byteOffset, img.data.length), img.width, img.height);
  return code?.data ?? null;
}

/**
 * Awaits `p`, or fails naming `what` once `ms` pass. For the steps Playwright gives no timeout of their own (opening
 * and closing a page, closing a server): a hung one fails with its name instead of the test's timeout.
 */
export async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

export async function until<T>(f: () => Promise<T | undefined>, ms = 30_000, what = 'condition'): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
