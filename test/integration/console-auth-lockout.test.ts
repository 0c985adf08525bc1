import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleApp, startConsoleApp } from '../support/console-auth-app.js';

// The sign-in's lockout: failed sign-ins counted by the GCRA limiter per account (5 per 15 minutes here) and per
// client IP (8 per 15 minutes here); once either is used up, 429 login_locked with a clear message and Retry-After,
// even for the right password. The lockout is audited.

let c: ConsoleApp;
beforeAll(async () => {
  c = await startConsoleApp({ loginFailuresPerAccount: 5, loginFailuresPerIp: 8 });
}, 60_000);
afterAll(async () => c?.close());

describe('login lockout', () => {
  it('locks an account after 5 failed sign-ins, whatever the address, with a clear message and Retry-After', async () => {
    const u = await c.user('merchant', await c.merchant());
    for (let i = 0; i < 5; i++) {
      const r = await c.login(u.email, `wrong-password-${i}`, {}, { ip: `10.2.0.${i + 1}` });
      expect(r.status).toBe(401);
    }
    const locked = await c.login(u.email, u.password, {}, { ip: '10.2.0.99' });
    expect(locked.status).toBe(429);
    expect(locked.json.error.code).toBe('login_locked');
    expect(locked.json.error.message).toMatch(/^Too many failed sign-ins for this account\. Try again in \d+ minutes?\.$/);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(60);
    expect(locked.cookie).toBeUndefined();
    // Email case does not escape the account's bucket.
    expect((await c.login(u.email.toUpperCase(), u.password, {}, { ip: '10.2.1.1' })).status).toBe(429);
    const audit = await c.t.db
      .selectFrom('console_audit')
      .selectAll()
      .where('action', '=', 'auth.lockout')
      .where('actor_email', '=', u.email)
      .execute();
    expect(audit).toHaveLength(1);
    // Another account is not locked.
    const other = await c.user('merchant', await c.merchant());
    expect((await c.login(other.email, other.password, {}, { ip: '10.2.0.99' })).status).toBe(200);
  });

  it('locks an address after 8 failed sign-ins across accounts; other addresses still sign in', async () => {
    const u = await c.user('merchant', await c.merchant());
    for (let i = 0; i < 8; i++) {
      const r = await c.login(`guess-${i}@console.test`, 'wrong-password', {}, { ip: '10.3.0.7' });
      expect(r.status).toBe(401);
    }
    const locked = await c.login(u.email, u.password, {}, { ip: '10.3.0.7' });
    expect(locked.status).toBe(429);
    expect(locked.json.error.message).toMatch(/^Too many failed sign-ins for this network address\. Try again in \d+ minutes?\.$/);
    expect(locked.headers['retry-after']).toBeDefined();
    expect((await c.login(u.email, u.password, {}, { ip: '10.3.0.8' })).status).toBe(200);
  });

  it('does not count successful sign-ins', async () => {
    const u = await c.user('merchant', await c.merchant());
    for (let i = 0; i < 7; i++) expect((await c.login(u.email, u.password, {}, { ip: '10.4.0.1' })).status).toBe(200);
  });
});
