import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core';
import { expect } from 'vitest';
import { currentTotpCode } from '../../src/operations/console-totp.js';
import { CHROMIUM_ARGS } from './checkout-harness.js';

// The console in headless Chromium (Debian's, through playwright-core): the built app (dist/console-ui, built here
// when missing), a browser with one context per viewport, every console error and CSP report collected, axe-core run
// in the page (evaluated through the DevTools protocol, so the page's CSP stays as strict as in production).

export const CONSOLE_SHOTS = join(process.cwd(), 'docs', 'console');
const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export function ensureConsoleBuilt(): void {
  if (existsSync(join('dist', 'console-ui', 'index.html'))) return;
  const r = spawnSync('npm', ['run', '-s', 'build:console'], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error('npm run build:console failed');
}

export interface ConsoleBrowser {
  browser: Browser;
  /** A fresh context (its own cookies) at a width: 1280 (desktop) or 390 (a phone). */
  context(width: 1280 | 390): Promise<BrowserContext>;
  /** Console messages of level error and page errors, across every page opened through `open`. */
  errors: string[];
  open(ctx: BrowserContext, url: string): Promise<Page>;
  close(): Promise<void>;
}

export async function launchConsoleBrowser(): Promise<ConsoleBrowser> {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
  });
  const errors: string[] = [];
  return {
    browser,
    errors,
    async context(width) {
      const ctx = await browser.newContext({ viewport: { width, height: width === 390 ? 844 : 900 }, locale: 'en-US' });
      ctx.setDefaultTimeout(20_000);
      return ctx;
    },
    async open(ctx, url) {
      const page = await ctx.newPage();
      page.on('console', (m) => {
        // A 401 of the first `me` before signing in, and aborted live streams on navigation, are expected network noise.
        if (m.type() === 'error' && !/status of 401|net::ERR_ABORTED/.test(m.text())) errors.push(`${page.url()}: ${m.text()}`);
      });
      page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
      await page.goto(url);
      return page;
    },
    async close() {
      await browser.close();
    },
  };
}

/** axe-core on the page as it is now: the serious and critical violations (none expected). */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(o?: unknown): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> };
      }
    ).axe;
    return axe.run({ resultTypes: ['violations'] });
  });
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id} (${v.nodes.length} nodes)`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  if (!process.env.CONSOLE_SCREENSHOTS) return; // scripts/console-screenshots.sh regenerates docs/console/*.png
  mkdirSync(CONSOLE_SHOTS, { recursive: true });
  await page.screenshot({ path: join(CONSOLE_SHOTS, `${name}.png`), fullPage: true });
}

/** Signs in through the page: email and password, then a TOTP code when the page asks for one. */
export async function signIn(page: Page, email: string, password: string, totpSecret?: string): Promise<void> {
  await page.getByTestId('login-email').fill(email);
  await page.getByTestId('login-password').fill(password);
  await page.getByTestId('login-submit').click();
  if (totpSecret) {
    await page.getByTestId('login-totp').waitFor();
    // The next step's code: valid now (one step of drift is allowed) and not yet used by the enrollment.
    await page.getByTestId('login-totp').fill(currentTotpCode(totpSecret, new Date(Date.now() + 30_000)));
    await page.getByTestId('login-submit').click();
  }
  await page.getByTestId('nav-overview').first().waitFor();
}

export async function expectNoErrors(b: ConsoleBrowser): Promise<void> {
  expect(b.errors).toEqual([]);
}

/**
 * A user's first sign-in through the page: the temporary password, a new password, and (operators, or when asked)
 * TOTP enrollment with the recovery codes shown once. Returns the new password and the TOTP secret.
 */
export async function firstSignIn(
  page: Page,
  email: string,
  temporaryPassword: string,
  o: { totp: boolean },
): Promise<{ password: string; totpSecret: string | undefined }> {
  await page.getByTestId('login-email').fill(email);
  await page.getByTestId('login-password').fill(temporaryPassword);
  await page.getByTestId('login-submit').click();
  await page.getByTestId('password-new').waitFor();
  const password = `console-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  await page.getByTestId('password-current').fill(temporaryPassword);
  await page.getByTestId('password-new').fill(password);
  await page.getByTestId('password-again').fill(password);
  await page.getByTestId('password-submit').click();
  if (!o.totp) {
    await page.getByTestId('nav-overview').first().waitFor();
    return { password, totpSecret: undefined };
  }
  await page.getByTestId('totp-start').click();
  const totpSecret = (await page.getByTestId('totp-secret').textContent())!.trim();
  await page.getByTestId('totp-code').fill(currentTotpCode(totpSecret, new Date()));
  await page.getByTestId('totp-confirm').click();
  await page.getByTestId('totp-done').click();
  await page.getByTestId('nav-overview').first().waitFor();
  return { password, totpSecret };
}

export const OPERATOR_PAGES = [
  'overview',
  'payments',
  'refunds',
  'stranded',
  'subscriptions',
  'webhooks',
  'keys',
  'merchants',
  'treasury',
  'books',
  'wallets',
  'users',
  'audit',
] as const;

/** Opens `#/<name>`, waits until nothing loads, and returns what a person would notice: error states and axe. */
export async function visit(page: Page, base: string, name: string): Promise<{ errors: number; empty: number; axe: string[] }> {
  await page.goto(`${base}#/${name}`);
  await page.getByTestId('page-title').first().waitFor();
  await expect.poll(async () => page.getByTestId('state-loading').count(), { timeout: 15_000, message: `#/${name} still loading` }).toBe(0);
  return {
    errors: await page.getByTestId('state-error').count(),
    empty: await page.getByTestId('state-empty').count(),
    axe: await axeViolations(page),
  };
}
