import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFERENCE_CSP } from '../../src/api/openapi/routes.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { launchBrowser } from './checkout-harness.js';

// The API reference page (GET /docs/api, docs/openapi.md) in headless Chromium against the real server: Scalar's
// bundle, served by the service from the installed package, draws our own OpenAPI document; every request the page
// makes stays on the service's origin (127.0.0.1), and its CSP (self only) is never violated.
let h: ApiHarness;
let browser: Awaited<ReturnType<typeof launchBrowser>>;

beforeAll(async () => {
  h = await startApiHarness();
  browser = await launchBrowser('en-US');
}, 120_000);

afterAll(async () => {
  await browser?.dispose();
  await h?.close();
});

describe('GET /docs/api', () => {
  it('renders our operations from /openapi.json with the local bundle, no request leaving 127.0.0.1', async () => {
    const page = await browser.newPage();
    await page.setViewportSize({ width: 1280, height: 900 }); // the desktop layout: the sidebar lists every operation
    const requests: string[] = [];
    const failed: string[] = [];
    const messages: string[] = [];
    // Every request of the context (pages and their workers), whatever the CSP would do with it.
    browser.on('request', (r) => requests.push(r.url()));
    browser.on('requestfailed', (r) => failed.push(r.url()));
    page.on('console', (m) => messages.push(`${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => messages.push(`pageerror: ${e.message}`));

    const res = await page.goto(`${h.baseUrl}/docs/api`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toBe(REFERENCE_CSP);
    await page.getByText('Create a payment session').first().waitFor({ timeout: 60_000 });
    // More of the document than the first tag: another tag's operation and an operation id (showOperationId).
    const sidebarTags = ['Refunds', 'Subscriptions', 'Webhooks'];
    for (const tag of sidebarTags) await page.getByText(tag, { exact: true }).first().waitFor({ timeout: 30_000 });
    await page.getByText('createSession', { exact: true }).first().waitFor({ timeout: 30_000 });
    await page.getByText('Retrieve a payment session').first().waitFor({ timeout: 30_000 });
    // Open another tag, then give any late request (fonts, telemetry, a proxy) the time to be issued.
    await page.getByText('Refunds', { exact: true }).first().click();
    await page.getByText('Retrieve a refund').first().waitFor({ timeout: 30_000 });
    await page.waitForTimeout(3000);

    const bundle = requests.find((u) => /\/docs\/api\/reference\.[A-Za-z0-9_-]{16}\.js$/.test(u));
    expect(bundle, requests.join('\n')).toBeDefined();
    expect(requests).toContain(`${h.baseUrl}/openapi.json`);
    const origin = new URL(h.baseUrl).origin;
    expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // data: URLs (the empty favicon) are not requests to anywhere.
    expect(requests.filter((u) => !u.startsWith('data:') && new URL(u).origin !== origin)).toEqual([]);
    expect(failed).toEqual([]);
    expect(messages.filter((m) => /Content[- ]Security[- ]Policy|pageerror|^error/i.test(m))).toEqual([]);

    const script = await fetch(bundle!);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    await page.close();
  }, 180_000);
});
