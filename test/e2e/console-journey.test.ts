import { randomBytes } from 'node:crypto';
import { Wallet } from 'ethers';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsoleUser } from '../../src/operations/console-users.js';
import { backgroundMiner } from '../support/chain-watch.js';
import { fund, payFrom, walletAt } from '../support/evm-tokens/scenario.js';
import { startFakeTicker, type FakeTicker } from '../support/fake-ticker.js';
import { fundedRefundWallet } from '../support/funded-refund-wallet.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { ETH_PRICES, gasStation, tokenBalance } from '../support/sweep-service.js';
import { EXPLORER_TX_URL } from './checkout-harness.js';
import {
  OPERATOR_PAGES,
  axeViolations,
  ensureConsoleBuilt,
  launchConsoleBrowser,
  screenshot,
  signIn,
  visit,
  type ConsoleBrowser,
} from './console-harness.js';

// The console in a real browser against the whole service (main.ts with the console role) on Anvil: an operator's
// journey from a first sign-in with TOTP enrollment to a refund paid on chain, and a merchant user kept to its own
// merchant. Every page is checked with axe-core, at 1,280 and 390 px, with no console error.

let h: ServiceHarness;
let receiver: WebhookReceiver;
let ticker: FakeTicker;
let b: ConsoleBrowser;
let shop: HarnessMerchant;
let other: HarnessMerchant;
let consoleUrl: string;
let operator: { email: string; password: string; totp?: string };
let opCtx: BrowserContext;
let op: Page;

beforeAll(async () => {
  ensureConsoleBuilt();
  receiver = await startWebhookReceiver();
  ticker = await startFakeTicker({ coinbaseRates: ETH_PRICES }); // the ETH price a sweep plan weighs its fee with
  h = await startServiceHarness({
    extraEnv: {
      ROLES: 'api,worker,watcher,console',
      CONSOLE_HOST: '127.0.0.1',
      CONSOLE_PORT: '0',
      CONSOLE_SECURE_COOKIES: 'false',
      CONSOLE_LIVE_INTERVAL_MS: '250',
      CHAIN_ETHEREUM_TEST_EXPLORER_TX_URL: EXPLORER_TX_URL,
      NATIVE_PRICE_SOURCES: 'coinbase',
      RATE_COINBASE_BASE_URL: ticker.url,
      SWEEP_TICK_MS: '200',
    },
  });
  consoleUrl = `http://127.0.0.1:${h.service.consolePort}/`;
  shop = await h.newMerchant('Console Shop', receiver.url);
  receiver.secrets.push(shop.webhookSecret);
  other = await h.newMerchant('Other Shop');
  await fundedRefundWallet(h, shop, 10n ** 18n, 50_000_000n);
  const created = await createConsoleUser({ db: h.t.db }, { kind: 'cli', id: 'test' }, { email: 'ops@console.test', role: 'operator' });
  operator = { email: 'ops@console.test', password: created.password };
  b = await launchConsoleBrowser();
  opCtx = await b.context(1280);
}, 240_000);

afterAll(async () => {
  await b?.close();
  await h?.close();
  await receiver?.close();
  await ticker?.close();
});

/** A session of `shop` for `amount` USD with ethereum/USDT selected; returns its id and what to pay. */
async function selectedSession(amount: string) {
  const created = await shop.client.post('/api/v1/checkout/sessions/create', {
    amount,
    currency: 'USD',
    order_id: `console-${randomBytes(4).toString('hex')}`,
  });
  expect(created.status).toBe(200);
  const sel = await fetch(`${h.base}/checkout/sessions/${created.json.id}/select`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ network: 'ethereum', token: 'USDT' }),
  });
  const s = (await sel.json()) as { deposit_address: string; amount_due_base: string };
  return { id: created.json.id as string, address: s.deposit_address, due: BigInt(s.amount_due_base) };
}

async function pay(address: string, amount: bigint): Promise<string> {
  const payer = walletAt(40 + Math.floor(Math.random() * 50), h.node.provider);
  await h.node.rpc('anvil_setBalance', [payer.address, '0xde0b6b3a7640000']);
  await fund(h.tokens.USDT, payer.address, amount);
  const tx = await payFrom(payer, h.tokens.USDT, address, amount);
  await h.node.mine(3);
  return tx;
}

describe('the operator', () => {
  it('signs in the first time: a new password, then TOTP, with recovery codes shown once', async () => {
    op = await b.open(opCtx, consoleUrl);
    expect(await axeViolations(op)).toEqual([]);
    await screenshot(op, 'sign-in');
    await op.getByTestId('login-email').fill(operator.email);
    await op.getByTestId('login-password').fill(operator.password);
    await op.getByTestId('login-submit').click();
    // The temporary password must be changed first.
    await op.getByTestId('password-new').waitFor();
    const password = `console-${randomBytes(8).toString('hex')}`;
    await op.getByTestId('password-current').fill(operator.password);
    await op.getByTestId('password-new').fill(password);
    await op.getByTestId('password-again').fill(password);
    await op.getByTestId('password-submit').click();
    operator.password = password;
    // Operators must turn on TOTP before anything else.
    await op.getByTestId('totp-start').click();
    const secret = (await op.getByTestId('totp-secret').textContent())!.trim();
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
    expect(await op.getByTestId('totp-url').textContent()).toContain('otpauth://totp/');
    await screenshot(op, 'totp-enrollment');
    const { currentTotpCode } = await import('../../src/operations/console-totp.js');
    await op.getByTestId('totp-code').fill(currentTotpCode(secret, new Date()));
    await op.getByTestId('totp-confirm').click();
    const codes = (await op.getByTestId('totp-recovery').textContent()) ?? '';
    expect(codes.match(/[0-9a-z]{4,}-[0-9a-z]{4,}|[0-9A-Za-z]{10,}/g)?.length ?? 0).toBeGreaterThanOrEqual(10);
    await op.getByTestId('totp-done').click();
    await op.getByTestId('nav-overview').first().waitFor();
    operator.totp = secret;
    // Signing out and in again asks for the code.
    await op.getByTestId('sign-out').first().click();
    await op.getByTestId('login-email').waitFor();
    await signIn(op, operator.email, operator.password, operator.totp);
    const audit = await h.t.db.selectFrom('console_audit').select('action').where('actor_email', '=', operator.email).execute();
    expect(audit.map((a) => a.action)).toEqual(
      expect.arrayContaining(['auth.password_change', 'auth.totp_enroll', 'auth.logout', 'auth.login']),
    );
  }, 120_000);

  it('sees a session become paid on the list without a reload, within 2 s of the service marking it paid', async () => {
    await op.goto(`${consoleUrl}#/payments`);
    if (process.env.DEBUG_CONSOLE) op.on('request', (r) => process.stderr.write(`${Date.now()} ${r.method()} ${r.url()}\n`));
    const s = await selectedSession('25.00');
    const row = op.getByTestId(`payments-row-${s.id}`);
    await row.waitFor();
    const txHash = await pay(s.address, s.due);
    const paidAt = await h.until(async () => {
      const r = await h.t.db.selectFrom('payment_sessions').select(['status', 'paid_at']).where('id', '=', s.id).executeTakeFirst();
      return r?.status === 'paid' ? Date.now() : undefined;
    }, 60_000);
    if (process.env.DEBUG_CONSOLE) process.stderr.write(`${paidAt} PAID\n`);
    await expect
      .poll(async () => (await row.getByTestId('payment-status').textContent())?.toLowerCase(), { timeout: 2000, interval: 50 })
      .toContain('paid');
    expect(Date.now() - paidAt).toBeLessThan(2000);
    await screenshot(op, 'payments');
    // Found by its transaction hash from the search box.
    await op.getByTestId('global-search').fill(txHash);
    await op.getByTestId('global-search').press('Enter');
    await op.locator(`a[href*="${s.id}"]`).first().click();
    await op.getByTestId('timeline-paid').waitFor();
    expect(op.url()).toContain(s.id);
    (globalThis as { paid?: { id: string; tx: string } }).paid = { id: s.id, tx: txHash };
  }, 120_000);

  it('refunds part of it and sees the refund paid on chain with its transaction link; resends its webhook', async () => {
    const { id } = (globalThis as unknown as { paid: { id: string } }).paid;
    await op.goto(`${consoleUrl}#/payments/${id}`);
    await op.getByTestId('timeline-paid').waitFor();
    await screenshot(op, 'payment-detail');
    await op.getByTestId('payment-refund').click();
    await op.getByTestId('refund-amount').fill('5.00');
    await op.getByTestId('refund-next').click();
    expect(await op.getByTestId('refund-summary').textContent()).toMatch(/5\.00/);
    await op.getByTestId('refund-confirm').click();
    const created = await h
      .until(async () => h.t.db.selectFrom('refunds').selectAll().where('session_id', '=', id).executeTakeFirst(), 15_000)
      .catch(async () => {
        throw new Error(`no refund was created; the page shows: ${await op.locator('main').innerText()}`);
      });
    expect(created.amount_minor).toBe(500n);
    const refund = await h
      .until(async () => {
        await h.node.mine(1); // the payout's confirmations
        const r = await h.t.db.selectFrom('refunds').selectAll().where('session_id', '=', id).executeTakeFirst();
        return r?.status === 'completed' ? r : undefined;
      }, 60_000)
      .catch(async () => {
        const r = await h.t.db.selectFrom('refunds').selectAll().where('session_id', '=', id).executeTakeFirst();
        const a = await h.t.db.selectFrom('payout_attempts').selectAll().execute();
        throw new Error(
          `the refund did not complete: ${JSON.stringify({ status: r?.status, failure: r?.failure_reason, attempts: a.length }, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`,
        );
      });
    expect(refund.amount_minor).toBe(500n);
    await op.goto(`${consoleUrl}#/refunds/${refund.id}`);
    await expect
      .poll(async () => (await op.getByTestId('refund-status').first().textContent())?.toLowerCase(), { timeout: 10_000 })
      .toContain('completed');
    const link = op.locator(`a[href="${EXPLORER_TX_URL.replace('{tx}', refund.transaction_hash!)}"]`);
    expect(await link.count()).toBeGreaterThan(0);
    await screenshot(op, 'refund-detail');
    // The payment's webhook delivery, resent from its page: the receiver gets the same event id again.
    await op.goto(`${consoleUrl}#/payments/${id}`);
    const completed = await h.until(async () => receiver.received.find((r) => r.eventType === 'payment.completed'), 30_000);
    const before = receiver.forEvent(completed.eventId!).length;
    await op.getByTestId(`resend-${completed.eventId}`).click();
    const confirm = op.getByTestId(`resend-${completed.eventId}-confirm`);
    if (await confirm.count()) await confirm.click();
    await receiver.waitFor(() => receiver.forEvent(completed.eventId!).length > before, 20_000);
    expect(receiver.forEvent(completed.eventId!).every((r) => r.problems.length === 0)).toBe(true);
  }, 150_000);

  it('plans a sweep (what waits and why, the fee, the gas station short of fee money), runs it and sees it complete live with its transaction link', async () => {
    const { id } = (globalThis as unknown as { paid: { id: string } }).paid;
    const { deposit_address: deposit } = await h.t.db
      .selectFrom('payment_sessions')
      .select('deposit_address')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const held = await tokenBalance(h, 'USDT', deposit!);
    expect(held).toBeGreaterThan(0n);
    const treasury = Wallet.createRandom().address.toLowerCase();
    await op.goto(`${consoleUrl}#/treasury`);
    // Where the shop's sweeps go: its treasury (no hot float).
    await op.getByTestId('dest-merchant').fill(shop.id);
    await op.getByTestId('dest-network').selectOption('ethereum');
    await op.getByTestId('dest-mode').selectOption('test');
    await op.getByTestId('dest-address').fill(treasury);
    await op.getByTestId('destination-save').click();
    await expect.poll(async () => (await op.getByTestId('treasury-destinations').innerText()).toLowerCase()).toContain(treasury);
    // A policy whose minimum is above the deposit: the plan says it waits, and why.
    const policy = async (min: string) => {
      await op.getByTestId('pol-network').selectOption('ethereum');
      await op.getByTestId('pol-mode').selectOption('test');
      await op.getByTestId('pol-token').selectOption('USDT');
      await op.getByTestId('pol-min').fill(min);
      await op.getByTestId('pol-fee').fill('5000');
      await op.getByTestId('policy-save').click();
      await expect
        .poll(async () => op.getByTestId('policy-current').textContent())
        .toContain(`minimum ${min}.00, fee at most 5000 bps (configured)`);
    };
    await policy('1000');
    await op.getByTestId('plan-network').selectOption('ethereum');
    await op.getByTestId('plan-mode').selectOption('test');
    await op.getByTestId('plan-show').click();
    await expect.poll(async () => op.getByTestId('plan-waiting').first().textContent(), { timeout: 15_000 }).toContain('below the minimum');
    expect(await op.getByTestId('plan-batch').count()).toBe(0);
    // Lowered: the plan sweeps it to the treasury, with its fee estimate; the gas station has no fee money yet.
    await policy('1');
    const batch = op.getByTestId('plan-batch');
    await expect.poll(async () => batch.count(), { timeout: 15_000 }).toBe(1);
    const line = (await batch.textContent()) ?? '';
    expect(line).toContain(shop.id);
    expect(line).toMatch(/→ treasury/);
    expect(line).toMatch(/1 addresses, \d+ steps, fee [0-9.]+ \(\d+ bps\)/);
    expect(await op.getByTestId('plan-waiting').count()).toBe(0);
    const station = op.getByTestId('plan-wallet-gas_station');
    expect(await station.textContent()).toMatch(/shortfall 0\.0*[1-9]/i);
    await screenshot(op, 'treasury-plan');
    // The operator funds the gas station (a devnet faucet), then waits for the watcher to pass that block: the sweep
    // registers the station as a watched wallet at the watcher's height, and its opening balance is read there.
    await h.node.rpc('anvil_setBalance', [await gasStation(h), '0xde0b6b3a7640000']); // 1 ETH
    await h.node.mine(1);
    const funded = BigInt(await h.node.rpc<string>('eth_blockNumber', []));
    await h.until(async () => {
      const c = await h.t.db.selectFrom('chain_cursors').select('tip_height').where('chain_key', '=', 'ethereum:test').executeTakeFirst();
      return c && BigInt(c.tip_height) >= funded ? true : undefined;
    }, 15_000);
    const miner = backgroundMiner(h.node, 150); // the sweep's transactions and their confirmations
    try {
      await op.getByTestId('sweep-run').click();
      await op.getByTestId('sweep-run-confirm').click();
      await op.getByTestId('sweep-run-result').waitFor();
      const sweep = await h.t.db.selectFrom('sweeps').selectAll().where('merchant_id', '=', shop.id).executeTakeFirstOrThrow();
      expect(await op.getByTestId('sweep-run-result').textContent()).toContain(sweep.id);
      // Followed live in the history: running, then completed with its transaction's link, with no reload.
      const row = op.getByTestId(`sweeps-row-${sweep.id}`);
      await row.waitFor();
      await expect
        .poll(async () => (await row.getByTestId('sweep-status').textContent())?.toLowerCase(), { timeout: 30_000, interval: 100 })
        .toContain('completed');
      const moved = await h.t.db
        .selectFrom('sweep_steps')
        .select('tx_hash')
        .where('sweep_id', '=', sweep.id)
        .where('purpose', 'in', ['batch', 'transfer'])
        .execute();
      expect(moved.length).toBeGreaterThan(0);
      for (const m of moved) await row.locator(`a[href="${EXPLORER_TX_URL.replace('{tx}', m.tx_hash!)}"]`).waitFor({ timeout: 5000 });
    } finally {
      miner.stop();
    }
    const done = await h.t.db.selectFrom('sweeps').selectAll().where('merchant_id', '=', shop.id).executeTakeFirstOrThrow();
    expect(done).toMatchObject({ status: 'completed', destination_kind: 'treasury', destination: treasury, swept_base: held });
    expect(await tokenBalance(h, 'USDT', treasury)).toBe(held);
    expect(await tokenBalance(h, 'USDT', deposit!)).toBe(0n);
    // Each of its transactions is journaled (the books step below reconciles the chain with them).
    const steps = await h.t.db.selectFrom('sweep_steps').select('tx_hash').where('sweep_id', '=', done.id).execute();
    const journaled = await h.t.db
      .selectFrom('journal_entries')
      .select('tx_hash')
      .where('kind', '=', 'sweep')
      .where('object_id', '=', done.id)
      .execute();
    expect(new Set(journaled.map((e) => e.tx_hash))).toEqual(new Set(steps.map((st) => st.tx_hash)));
    const audit = await h.t.db.selectFrom('console_audit').select('action').where('actor_email', '=', operator.email).execute();
    expect(audit.map((a) => a.action)).toEqual(expect.arrayContaining(['treasury_destination.set', 'sweep_policy.set', 'sweep.run']));
  }, 120_000);

  it('runs reconcile from the books page, acknowledges the unexplained movement it found, and sees the network clean', async () => {
    const { listUnexplained } = await import('../../src/ledger/journal/unexplained.js');
    const runFromPage = async () => {
      const before = await h.t.db
        .selectFrom('reconcile_runs')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow();
      await op.goto(`${consoleUrl}#/books`);
      await op.getByTestId('reconcile-run').click();
      await op.getByTestId('reconcile-run-confirm').click();
      return h.until(async () => {
        await h.node.mine(1); // the watcher covers the pinned height
        const rows = await h.t.db.selectFrom('reconcile_runs').selectAll().orderBy('id', 'desc').execute();
        return rows.length > Number(before.n) ? rows[0] : undefined;
      }, 120_000);
    };
    // The refund wallet's gas was set outside the gateway (anvil_setBalance): the first run books it as unexplained,
    // and nothing else (the sweep's movements are journaled; the gas station's funding is in its opening balance).
    const first = await runFromPage();
    expect(first.network).toBe('ethereum');
    const found = await h.until(async () => {
      const u = await listUnexplained(h.t.db, { network: 'ethereum', mode: 'test' });
      return u.length > 0 ? u : undefined;
    }, 30_000);
    expect(found).toHaveLength(1);
    const [entry] = found;
    expect(entry!.legs.map((l) => l.account).join(' ')).toContain(shop.hotWallet.toLowerCase());
    await op.reload();
    await op.getByTestId(`acknowledge-${entry!.entryId}`).click();
    await op.getByTestId('acknowledge-note').fill('gas top-up by the operator');
    await op.getByTestId(`acknowledge-${entry!.entryId}-confirm`).click();
    await h.until(
      async () =>
        (await listUnexplained(h.t.db, { network: 'ethereum', mode: 'test' })).some((u) => u.entryId === entry!.entryId) ? undefined : true,
      15_000,
    );
    const audit = await h.t.db.selectFrom('console_audit').selectAll().where('action', '=', 'journal_entry.acknowledge').execute();
    expect(audit).toHaveLength(1);
    // Run again: the ledger equals the chain to the base unit.
    const second = await runFromPage();
    expect(second.differences).toBe(0);
    expect(await listUnexplained(h.t.db, { network: 'ethereum', mode: 'test' })).toEqual([]);
    await op.reload();
    await expect
      .poll(async () => (await op.getByTestId('reconcile-differences').first().textContent())?.toLowerCase(), { timeout: 10_000 })
      .toContain('ok');
    await screenshot(op, 'books');
  }, 240_000);

  it('every operator page renders, passes axe and shows no error, at 1,280 and 390 px', async () => {
    const pages = OPERATOR_PAGES;
    const phone = await b.context(390);
    await phone.addCookies(await opCtx.cookies()); // the same console session on a phone
    const small = await b.open(phone, consoleUrl);
    for (const [width, page] of [[1280, op] as const, [390, small] as const]) {
      for (const name of pages) {
        const seen = await visit(page, consoleUrl, name);
        expect(seen.errors, `${name} at ${width}`).toBe(0);
        expect(seen.axe, `${name} at ${width}`).toEqual([]);
        if (width === 1280) await screenshot(page, name);
        else if (name === 'overview' || name === 'payments') await screenshot(page, `${name}-390`);
      }
    }
    await phone.close();
    expect(b.errors).toEqual([]);
  }, 300_000);
});

describe('a merchant user', () => {
  it('sees its own payments, and every operator page and other merchant object is refused (403), in the page and by API', async () => {
    const { password } = await createConsoleUser(
      { db: h.t.db },
      { kind: 'cli', id: 'test' },
      { email: 'shop@console.test', role: 'merchant', merchantId: shop.id },
    );
    const ctx = await b.context(1280);
    const page = await b.open(ctx, consoleUrl);
    await page.getByTestId('login-email').fill('shop@console.test');
    await page.getByTestId('login-password').fill(password);
    await page.getByTestId('login-submit').click();
    await page.getByTestId('password-new').waitFor();
    await page.getByTestId('password-current').fill(password);
    await page.getByTestId('password-new').fill('merchant-user-password-1');
    await page.getByTestId('password-again').fill('merchant-user-password-1');
    await page.getByTestId('password-submit').click();
    await page.getByTestId('nav-overview').first().waitFor();
    for (const name of ['treasury', 'books', 'wallets', 'users', 'merchants'])
      expect(await page.getByTestId(`nav-${name}`).count(), name).toBe(0);
    const { id } = (globalThis as unknown as { paid: { id: string } }).paid;
    await page.goto(`${consoleUrl}#/payments`);
    await page.getByTestId(`payments-row-${id}`).waitFor();
    await page.goto(`${consoleUrl}#/treasury`);
    await page.getByTestId('not-found').waitFor();
    // By direct API calls with the merchant user's own session cookie and CSRF token.
    const cookie = (await ctx.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const me = await fetch(`${consoleUrl}api/auth/me`, { headers: { cookie } });
    const csrf = ((await me.json()) as { csrf_token: string }).csrf_token;
    const otherSession = await other.client.post('/api/v1/checkout/sessions/create', {
      amount: '3.00',
      currency: 'USD',
      order_id: `o-${randomBytes(3).toString('hex')}`,
    });
    for (const path of [
      'api/wallets',
      'api/users',
      'api/reconcile/runs',
      `api/payments/${otherSession.json.id}`,
      `api/merchants/${other.id}`,
    ]) {
      const r = await fetch(`${consoleUrl}${path}`, { headers: { cookie } });
      expect(r.status, path).toBe(403);
    }
    const cancel = await fetch(`${consoleUrl}api/payments/${otherSession.json.id}/cancel`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(cancel.status).toBe(403);
    const list = await fetch(`${consoleUrl}api/payments?merchant_id=${other.id}`, { headers: { cookie } });
    expect(list.status).toBe(403);
    // No CSRF token: refused even with the cookie.
    const noCsrf = await fetch(`${consoleUrl}api/auth/logout-all`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(noCsrf.status).toBe(403);
    expect(await axeViolations(page)).toEqual([]);
    await ctx.close();
    expect(b.errors).toEqual([]);
  }, 120_000);
});
