import { createServer } from 'node:http';
import { getAddress } from 'ethers';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NETWORK_IDS, TOKEN_SYMBOLS } from '../../chains/types.js';
import { networkEntry } from '../../chains/registry.js';
import { loadCheckoutAssets } from '../../src/checkout/assets.js';
import { computeLiveStatus } from '../../src/checkout/live-status.js';
import { loadPageSession } from '../../src/checkout/page-data.js';
import { renderPage, type PaymentOption } from '../../src/checkout/render-page.js';
import { payFrom } from '../support/evm-tokens/scenario.js';
import { listenOnLoopback } from '../support/listen.js';
import {
  CONFIRMATIONS,
  EXPLORER_TX_URL,
  artifact,
  decodeQr,
  launchBrowser,
  startCheckoutStack,
  until,
  within,
  type CheckoutStack,
} from './checkout-harness.js';

// The hosted payment page in headless Chromium against the whole service (main.ts, all roles) on Anvil.
let stack: CheckoutStack;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
const cspViolations: string[] = [];

beforeAll(async () => {
  stack = await startCheckoutStack();
  browser = await launchBrowser('en-US');
});

afterAll(async () => {
  await browser?.dispose();
  await stack?.stop();
});

let seq = 0;
async function createSession(body: Record<string, unknown> = {}) {
  const r = await stack.shop.post('/api/v1/checkout/sessions/create', {
    amount: '12.34',
    currency: 'USD',
    order_id: `co-${Date.now()}-${seq++}`,
    ...body,
  });
  expect(r.status).toBe(200);
  return r.json as { id: string; url: string };
}

async function openPage(url: string): Promise<Page> {
  const page = await browser.newPage();
  page.on('console', (m) => {
    if (/Content[- ]Security[- ]Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  await page.goto(url);
  return page;
}

const state = (page: Page) => page.locator('#sp-status').getAttribute('data-state');

async function waitForState(page: Page, wanted: string, ms = 30_000) {
  await until(async () => ((await state(page)) === wanted ? true : undefined), ms, `page state ${wanted}`);
}

/** A phone's first screen (iPhone SE size, issue 17). */
const PHONE = { width: 375, height: 667 };

/** The element lies entirely on the first screen, without scrolling. */
async function onFirstScreen(page: Page, selector: string): Promise<boolean> {
  return page.locator(selector).evaluate((el, h) => {
    const r = el.getBoundingClientRect();
    return (globalThis as unknown as { scrollY: number }).scrollY === 0 && r.top >= 0 && r.bottom <= h && r.height > 0;
  }, PHONE.height);
}

const scrollWidth = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth');

async function pickAndContinue(page: Page, label: RegExp) {
  await page.getByLabel(label).check();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.locator('#sp-address').waitFor();
}

describe('hosted payment page in Chromium', () => {
  it('takes a payer from the picker to paid: Ethereum + USDT, address, amount, QR = deep link, pay on Anvil, redirect', async () => {
    const session = await createSession({
      success_url: `${stack.site.url}/thanks?order=1`,
      line_items: [
        {
          price_data: { currency: 'USD', unit_amount: '5.67', product_data: { name: 'Tea <b>Oolong</b>', description: '100 g' } },
          quantity: 2,
        },
      ],
      tax_amount: '0.50',
      shipping_amount: '0.50',
      metadata: { internal_note: 'never-show-this-note' },
    });
    const page = await openPage(session.url);
    expect(await page.title()).toBe('Pay Café Ω & Co');
    expect(await state(page)).toBe('select');
    // Summary: items (escaped, not interpreted), tax, shipping, total in the merchant currency, converted amount.
    await expect.poll(() => page.locator('.items').innerText()).toContain('Tea <b>Oolong</b>');
    expect(await page.locator('.items').innerText()).toContain('11.34 USD');
    expect(await page.locator('#sp-total').innerText()).toBe('12.34 USD');
    expect(await page.locator('#sp-converted').innerText()).toBe('12.34 USDT');
    // The amount also leads the page, above the status and the picker.
    expect(await page.locator('#sp-top-amount').innerText()).toBe('12.34 USD');
    expect(await page.locator('#sp-top-converted').innerText()).toBe('You pay: 12.34 USDT');
    // The picker lists what the deployment enables: Ethereum USDT and USDC, nothing else.
    const options = await page.locator('input[name=choice]').evaluateAll((els) => els.map((e) => e.getAttribute('value')));
    expect(options).toEqual(['ethereum:USDT', 'ethereum:USDC']);
    // The script runs under the CSP: the countdown ticks.
    const c0 = await page.locator('#sp-countdown').innerText();
    await expect.poll(() => page.locator('#sp-countdown').innerText(), { timeout: 5000 }).not.toBe(c0);
    await page.screenshot({ path: artifact('1-select.png'), fullPage: true });

    await pickAndContinue(page, /USDT · Ethereum/);
    expect(await state(page)).toBe('waiting');
    const address = await page.locator('#sp-address').innerText();
    const amount = await page.locator('#sp-amount').innerText();
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(address).toBe(getAddress(address)); // EIP-55 display form
    expect(amount).toBe('12.34 USDT');
    expect(await page.locator('#sp-warning').innerText()).toBe('Send only USDT on Ethereum (ERC-20).');
    const row = await stack.t.db
      .selectFrom('payment_sessions')
      .select(['deposit_address', 'network', 'token'])
      .where('id', '=', session.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ deposit_address: address.toLowerCase(), network: 'ethereum', token: 'USDT' });

    // The deep link is EIP-681 with base units, and the QR code in the rendered page encodes exactly it.
    const deepLink = await page.locator('#sp-deeplink').getAttribute('href');
    expect(deepLink).toBe(`ethereum:${getAddress(stack.usdt.address)}@31337/transfer?address=${address}&uint256=12340000`);
    const qr = decodeQr(await page.locator('#sp-qr').screenshot());
    expect(qr).toBe(deepLink);
    await page.screenshot({ path: artifact('2-waiting.png'), fullPage: true });

    // Pay on chain: seen first (1 of N confirmations), then paid, then the redirect to success_url.
    await payFrom(stack.payer, stack.usdt, address, 12_340_000n);
    await waitForState(page, 'confirming');
    await expect.poll(() => page.locator('#sp-confirmations').innerText()).toBe(`Confirmations: 1 of ${CONFIRMATIONS}`);
    await page.screenshot({ path: artifact('3-confirming.png'), fullPage: true });
    await stack.node.mine(CONFIRMATIONS);
    await waitForState(page, 'paid');
    expect(await page.locator('#sp-status-text').innerText()).toBe('Paid. Thank you!');
    expect(await page.locator('#sp-pay').isHidden()).toBe(true);
    await page.screenshot({ path: artifact('4-paid.png'), fullPage: true });
    await page.waitForURL(`${stack.site.url}/thanks?order=1`, { timeout: 10_000 });
    expect(stack.site.hits).toContain('/thanks?order=1');
    expect((await stack.shop.get(`/api/v1/checkout/sessions/${session.id}`)).json.payment_status).toBe('paid');
    await page.close();
  });

  it('shows the remainder after a partial payment, with a QR code for the remaining amount', async () => {
    const session = await createSession({ amount: '10.00' });
    const page = await openPage(session.url);
    await pickAndContinue(page, /USDC · Ethereum/);
    const address = await page.locator('#sp-address').innerText();
    expect(await page.locator('#sp-amount').innerText()).toBe('10.00 USDC');

    await payFrom(stack.payer, stack.usdc, address, 4_000_000n);
    await stack.node.mine(CONFIRMATIONS);
    await waitForState(page, 'partial');
    expect(await page.locator('#sp-status-text').innerText()).toBe('Partially paid: 6.00 USDC still to pay.');
    // The page re-rendered the instructions for what remains.
    await expect.poll(() => page.locator('#sp-amount').innerText()).toBe('6.00 USDC');
    expect(await page.locator('#pay-h').innerText()).toBe('Send the remaining');
    expect(await page.locator('#sp-received').innerText()).toBe('4.00 USDC');
    const deepLink = await page.locator('#sp-deeplink').getAttribute('href');
    expect(deepLink).toBe(`ethereum:${getAddress(stack.usdc.address)}@31337/transfer?address=${address}&uint256=6000000`);
    expect(decodeQr(await page.locator('#sp-qr').screenshot())).toBe(deepLink);
    // Once money arrived the choice is locked: no link to change it.
    expect(await page.getByText('Change network or token').count()).toBe(0);
    await page.screenshot({ path: artifact('5-partial.png'), fullPage: true });

    // It survives a reload.
    await page.reload();
    expect(await state(page)).toBe('partial');
    expect(await page.locator('#sp-amount').innerText()).toBe('6.00 USDC');
    await page.close();
  });

  it('on a 375 px phone: the amount on the first screen, and once paid what arrived with one explorer link per transfer', async () => {
    const session = await createSession({ amount: '10.00' });
    const page = await openPage(session.url);
    await page.setViewportSize(PHONE);
    expect(await page.locator('#sp-top-amount').innerText()).toBe('10.00 USD');
    expect(await onFirstScreen(page, '#sp-top-amount')).toBe(true);
    await pickAndContinue(page, /USDT · Ethereum/);
    const address = await page.locator('#sp-address').innerText();
    expect(await onFirstScreen(page, '#sp-top-amount')).toBe(true);
    expect(await page.locator('#sp-arrived').count()).toBe(0);

    // Two transfers: 4.00 then 6.00. No success_url, so the payer stays and the page turns into the receipt.
    await payFrom(stack.payer, stack.usdt, address, 4_000_000n);
    await stack.node.mine(CONFIRMATIONS);
    await waitForState(page, 'partial');
    await payFrom(stack.payer, stack.usdt, address, 6_000_000n);
    await stack.node.mine(CONFIRMATIONS);
    await page.locator('#sp-arrived').waitFor({ timeout: 30_000 });
    expect(await state(page)).toBe('paid');
    expect(await page.locator('#sp-status-text').innerText()).toBe('Paid. Thank you!');

    const credited = await stack.t.db
      .selectFrom('deposits')
      .select(['tx_hash', 'amount_base'])
      .where('session_id', '=', session.id)
      .where('disposition', '=', 'credited')
      .orderBy('block_number')
      .orderBy('log_index')
      .execute();
    expect(credited.map((d) => d.amount_base)).toEqual([4_000_000n, 6_000_000n]);
    expect(new Set(credited.map((d) => d.tx_hash)).size).toBe(2);
    expect(await page.locator('#arrived-h').innerText()).toBe('What arrived');
    expect(await page.locator('#sp-arrived .arrived-amount').allInnerTexts()).toEqual(['4.00 USDT', '6.00 USDT']);
    const links = await page
      .locator('#sp-arrived a.tx')
      .evaluateAll((els) => els.map((e) => ({ href: e.getAttribute('href'), text: e.textContent, label: e.getAttribute('aria-label') })));
    expect(links.map((l) => l.href)).toEqual(credited.map((d) => EXPLORER_TX_URL.replace('{tx}', d.tx_hash)));
    for (const [i, l] of links.entries()) {
      const hash = credited[i]!.tx_hash;
      expect(l.text).toBe(`${hash.slice(0, 10)}…${hash.slice(-8)}`);
      expect(l.label).toBe(`View transaction ${hash} on a block explorer`);
    }
    expect(await page.locator('#sp-arrived').innerText()).toContain('on Ethereum (ERC-20)');
    // Amount first, then the receipt; nothing wider than the phone.
    expect(await onFirstScreen(page, '#sp-top-amount')).toBe(true);
    const [topY, arrivedY] = await Promise.all(
      ['#sp-amount-top', '#sp-arrived'].map((sel) => page.locator(sel).evaluate((el) => el.getBoundingClientRect().top)),
    );
    expect(topY!).toBeLessThan(arrivedY!);
    expect(await scrollWidth(page)).toBeLessThanOrEqual(PHONE.width);
    await page.screenshot({ path: artifact('9-paid-arrived-375.png'), fullPage: true });

    // A later visit shows the same receipt.
    await page.reload();
    expect(await page.locator('#sp-arrived a.tx').count()).toBe(2);
    await page.close();
  });

  it('on a 375 px phone with more than six choices: the amount stays on the first screen and every choice shows its amount', async () => {
    // Every network and token enabled (one choice per registry network and token): the page as renderPage builds it from a real session row, with the
    // real stylesheet. (The stack above runs Ethereum only; the layout does not depend on which chains answer.)
    const session = await createSession({ amount: '12.34' });
    const loaded = (await loadPageSession(stack.t.db, session.id))!;
    const options: PaymentOption[] = NETWORK_IDS.flatMap((network) =>
      TOKEN_SYMBOLS.map((token) => ({ network, token, checked: false, amount: `12.34 ${token}` })),
    );
    expect(options.length).toBeGreaterThan(6);
    const assets = loadCheckoutAssets();
    const pageHtml = renderPage({
      lang: 'en',
      basePath: '/pay',
      assets,
      session: loaded,
      live: computeLiveStatus(loaded.row, [], null, { returnPath: `/pay/${session.id}/return` }),
      options,
      showPicker: true,
      pinned: {},
      canChange: false,
      payment: null,
      arrived: [],
      error: null,
      serverNow: Math.floor(Date.now() / 1000),
    });
    const server = createServer((req, res) => {
      if (req.url === '/') return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(pageHtml);
      if (req.url === `/pay/assets/${assets.style.name}`)
        return res.writeHead(200, { 'content-type': assets.style.contentType }).end(assets.style.body);
      res.writeHead(404).end();
    });
    const port = await listenOnLoopback(server);
    const page = await within(15_000, 'opening a page', browser.newPage());
    try {
      await page.setViewportSize(PHONE);
      await page.goto(`http://127.0.0.1:${port}/`);
      expect(await page.locator('input[name=choice]').count()).toBe(options.length);
      // Each choice carries its network's badge, coloured by the stylesheet's generated rule (no inline style).
      const badges = page.locator('#sp-picker .nb');
      expect(await badges.count()).toBe(options.length);
      const colour = (hex: string) => `rgb(${[1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)).join(', ')})`;
      for (const [i, o] of options.entries()) {
        const entry = networkEntry(o.network)!;
        expect(await badges.nth(i).innerText()).toBe(entry.badge.mark);
        expect(
          await badges
            .nth(i)
            .evaluate(
              (el) =>
                (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(el)
                  .backgroundColor,
            ),
        ).toBe(colour(entry.badge.color));
      }
      expect(await page.locator('#sp-top-amount').innerText()).toBe('12.34 USD');
      expect(await onFirstScreen(page, '#sp-top-amount')).toBe(true);
      // The stylesheet applied (the card layout), else the check above would prove nothing about the real page.
      expect(
        await page
          .locator('#sp-amount-top')
          .evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { display: string } }).getComputedStyle(el).display),
      ).toBe('flex');
      const amounts = page.locator('#sp-picker .option-amount');
      expect(await amounts.allInnerTexts()).toEqual(options.map((o) => o.amount));
      for (let i = 0; i < options.length; i++) expect(await amounts.nth(i).isVisible()).toBe(true);
      expect(await scrollWidth(page)).toBeLessThanOrEqual(PHONE.width);
      await page.screenshot({ path: artifact('10-picker-8-options-375.png'), fullPage: true });
    } finally {
      // Chromium may still hold a connection to this server (a preconnect, a late request): cut them all, so the close
      // never waits on the browser, and a failure above is reported rather than hidden behind a hung teardown.
      server.closeAllConnections();
      await within(15_000, 'closing the page server', new Promise<void>((r) => server.close(() => r())));
      await within(15_000, 'closing the page', page.close());
    }
  });

  it('keeps the status live when the event stream is blocked: it falls back to polling', async () => {
    const session = await createSession({ amount: '3.00' });
    const page = await browser.newPage();
    let blocked = 0;
    await page.route('**/events', (route) => {
      blocked++;
      return route.abort('connectionreset');
    });
    await page.goto(session.url);
    await pickAndContinue(page, /USDT · Ethereum/);
    const address = await page.locator('#sp-address').innerText();
    await payFrom(stack.payer, stack.usdt, address, 3_000_000n);
    await stack.node.mine(CONFIRMATIONS);
    await waitForState(page, 'paid');
    expect(blocked).toBeGreaterThanOrEqual(2);
    expect(await page.locator('#sp-status-text').innerText()).toBe('Paid. Thank you!');
    await page.close();
  });

  it('polls at once when the event stream is refused with 429 (over a stream cap), and still shows paid', async () => {
    const session = await createSession({ amount: '4.00' });
    const page = await browser.newPage();
    let refused = 0;
    await page.route('**/events', (route) => {
      refused++;
      return route.fulfill({
        status: 429,
        headers: { 'retry-after': '10' },
        contentType: 'application/json',
        body: JSON.stringify({
          error: { type: 'rate_limit_error', code: 'rate_limit_exceeded', message: 'Too many live streams.', param: null, doc_url: '' },
          request_id: 'req_x',
          timestamp: 0,
        }),
      });
    });
    await page.goto(session.url);
    await pickAndContinue(page, /USDT · Ethereum/);
    const address = await page.locator('#sp-address').innerText();
    await payFrom(stack.payer, stack.usdt, address, 4_000_000n);
    await stack.node.mine(CONFIRMATIONS);
    await waitForState(page, 'paid');
    expect(refused).toBeGreaterThanOrEqual(1);
    expect(await page.locator('#sp-offline').isHidden()).toBe(true);
    await page.close();
  });

  it('shows an expired session as expired, live while open and after a reload', async () => {
    const session = await createSession();
    const page = await openPage(session.url);
    await pickAndContinue(page, /USDT · Ethereum/);
    // Pull the expiry close: the page's countdown and the worker's expiry both follow expires_at.
    await stack.t.db
      .updateTable('payment_sessions')
      .set({ expires_at: new Date(Date.now() + 3000) })
      .where('id', '=', session.id)
      .execute();
    await page.reload();
    expect(await state(page)).toBe('waiting');
    await waitForState(page, 'expired', 20_000);
    expect(await page.locator('#sp-status-text').innerText()).toBe('This payment session has expired.');
    expect(await page.locator('#sp-pay').isHidden()).toBe(true);
    await page.screenshot({ path: artifact('6-expired.png'), fullPage: true });
    // The ledger expires it once the watcher has seen a block timestamped after expires_at (nothing is in flight then).
    await until(
      async () => {
        await stack.node.mine(1);
        const r = await stack.t.db.selectFrom('payment_sessions').select('status').where('id', '=', session.id).executeTakeFirstOrThrow();
        return r.status === 'expired' ? true : undefined;
      },
      20_000,
      'the ledger to expire the session',
    );
    await page.reload();
    expect(await state(page)).toBe('expired');
    expect(await page.locator('#sp-address').count()).toBe(0);
    await page.close();
  });

  it('shows a canceled session as canceled, with the way back to the merchant', async () => {
    const session = await createSession({ cancel_url: `${stack.site.url}/cart` });
    const page = await openPage(session.url);
    expect(await state(page)).toBe('select');
    const canceled = await stack.shop.post(`/api/v1/checkout/sessions/${session.id}/cancel`, {});
    expect(canceled.status).toBe(200);
    await waitForState(page, 'canceled', 10_000);
    expect(await page.locator('#sp-status-text').innerText()).toBe('This payment was canceled by the merchant.');
    await page.screenshot({ path: artifact('7-canceled.png'), fullPage: true });
    await page.getByRole('link', { name: 'Back to Café Ω & Co' }).click();
    await page.waitForURL(`${stack.site.url}/cart`);
    await page.close();
  });

  it('speaks Chinese when the browser prefers it, and switches language on request', async () => {
    const session = await createSession();
    const zh = await launchBrowser('zh-CN');
    try {
      const page = await zh.newPage();
      await page.goto(session.url);
      expect(await page.locator('html').getAttribute('lang')).toBe('zh-CN');
      expect(await page.title()).toBe('向 Café Ω & Co 付款');
      expect(await page.locator('#picker-h').innerText()).toBe('选择支付方式');
      await page.getByLabel(/USDT · 以太坊/).check();
      await page.getByRole('button', { name: '继续' }).click();
      await page.locator('#sp-address').waitFor();
      expect(await page.locator('#sp-warning').innerText()).toBe('仅可通过 以太坊 (ERC-20) 发送 USDT。');
      expect(await page.locator('#sp-status-text').innerText()).toBe('等待您的付款…');
      await page.screenshot({ path: artifact('8-zh.png'), fullPage: true });
      await page.getByRole('link', { name: 'English' }).click();
      await page.waitForURL(/lang=en/);
      expect(await page.locator('html').getAttribute('lang')).toBe('en');
      expect(await page.locator('#sp-status-text').innerText()).toBe('Waiting for your payment…');
    } finally {
      await zh.dispose();
    }
  });

  it('raised no Content-Security-Policy violation in any of the pages above', () => {
    expect(cspViolations).toEqual([]);
  });
});
