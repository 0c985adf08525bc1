import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, startConsoleApp, type ConsoleApp } from '../support/console-auth-app.js';
import { OPERATOR_PAGES, ensureConsoleBuilt, firstSignIn, launchConsoleBrowser, visit, type ConsoleBrowser } from './console-harness.js';

// The console over an empty database (no merchant, no payment, no chain configured), served under a path of a
// listener (as with CONSOLE_PATH): every operator page shows its empty state, never an error, at 1,280 and 390 px,
// with no serious or critical axe violation and no console error.

let c: ConsoleApp;
let b: ConsoleBrowser;
let url: string;

beforeAll(async () => {
  ensureConsoleBuilt();
  c = await startConsoleApp({ secureCookies: false, uiDir: 'dist/console-ui' });
  const address = await c.app.listen({ host: '127.0.0.1', port: 0 });
  url = `${address}${BASE}/`;
  b = await launchConsoleBrowser();
}, 120_000);

afterAll(async () => {
  await b?.close();
  await c?.close();
});

describe('the console over an empty database', () => {
  it('renders every operator page with its empty state at 1,280 and 390 px', async () => {
    const { email, password } = await c.user('operator', undefined, { firstSignIn: true });
    const desk = await b.context(1280);
    const page = await b.open(desk, url);
    await firstSignIn(page, email, password, { totp: true });
    const phone = await b.context(390);
    await phone.addCookies(await desk.cookies());
    const small = await b.open(phone, url);
    let empties = 0;
    for (const p of [page, small]) {
      for (const name of OPERATOR_PAGES) {
        const seen = await visit(p, url, name);
        expect(seen.errors, `${name} at ${p.viewportSize()?.width}`).toBe(0);
        expect(seen.axe, `${name} at ${p.viewportSize()?.width}`).toEqual([]);
        empties += seen.empty;
      }
    }
    // The lists say they are empty (payments, refunds, stranded, subscriptions, deliveries, keys, merchants, sweeps...).
    expect(empties).toBeGreaterThanOrEqual(2 * 8);
    expect(b.errors).toEqual([]);
  }, 180_000);
});
