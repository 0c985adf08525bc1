import { execFile } from 'node:child_process';
import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_MASTER_KEY } from '../support/api-harness.js';
import { type ConsoleApp, startConsoleApp } from '../support/console-auth-app.js';

// `npm run cli -- console user ...` as a real child process on a console's database: the users it makes sign in to
// the console, disable and reset end their sessions, each command leaves an audit row naming the OS user.

let c: ConsoleApp;
beforeAll(async () => {
  c = await startConsoleApp();
}, 60_000);
afterAll(async () => c?.close());

function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      'node',
      ['--import', 'tsx', 'src/cli/index.ts', 'console', 'user', ...args],
      { env: { ...process.env, DATABASE_URL: c.t.url, MASTER_KEY: TEST_MASTER_KEY, LOG_LEVEL: 'silent' }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const e = error as (Error & { code?: number }) | null;
        resolve({ code: e ? (typeof e.code === 'number' ? e.code : -1) : 0, out: stdout, err: stderr });
      },
    );
  });
}

const auditOf = (objectId: string, action: string) =>
  c.t.db.selectFrom('console_audit').selectAll().where('object_id', '=', objectId).where('action', '=', action).execute();

describe('console user (CLI)', () => {
  it('creates the first operator, whose temporary password signs in to the console (TOTP enrollment then required)', async () => {
    const r = await cli('create', '--email', 'first-op@console.test', '--role', 'operator');
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out);
    expect(out.user).toMatchObject({ email: 'first-op@console.test', role: 'operator', merchant_id: null, must_change_password: true });
    expect(out.temporary_password).toMatch(/^[0-9A-Za-z]{20}$/);
    const login = await c.login('first-op@console.test', out.temporary_password);
    expect(login.status).toBe(200);
    expect(login.json.totp_enrollment_required).toBe(true);
    const [a] = await auditOf(out.user.id, 'console_user.create');
    expect(a).toMatchObject({ actor_kind: 'cli', actor_id: userInfo().username });

    const dup = await cli('create', '--email', 'FIRST-OP@console.test', '--role', 'operator');
    expect(dup.code).toBe(2);
    expect(dup.err).toContain('exists already');
  }, 120_000);

  it('creates a merchant user only for an existing merchant, and refuses bad usage with exit 2', async () => {
    const m = await c.merchant();
    const ok = await cli('create', '--email', 'clerk@shop.test', '--role', 'merchant', '--merchant', m);
    expect(ok.code, ok.err).toBe(0);
    expect(JSON.parse(ok.out).user.merchant_id).toBe(m);
    const missing = await cli('create', '--email', 'x@shop.test', '--role', 'merchant', '--merchant', 'mch_000000000000000000000000');
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('No such merchant');
    const noMerchant = await cli('create', '--email', 'x@shop.test', '--role', 'merchant');
    expect(noMerchant.code).toBe(2);
    expect(noMerchant.err).toContain('--merchant is required');
    const badEmail = await cli('create', '--email', 'nope', '--role', 'operator');
    expect(badEmail.code).toBe(2);
    expect(badEmail.err).toContain('Invalid email');
    const list = await cli('list', '--merchant', m);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.out).map((u: { email: string }) => u.email)).toEqual(['clerk@shop.test']);
  }, 120_000);

  it('disables a user by email and resets one by id: sessions end, the new password works, audited', async () => {
    const m = await c.merchant();
    const u = await c.user('merchant', m);
    const s = await c.login(u.email, u.password);
    const dis = await cli('disable', u.email.toLowerCase());
    expect(dis.code, dis.err).toBe(0);
    expect(JSON.parse(dis.out).user).toMatchObject({ id: u.id, disabled: true });
    expect((await c.call('GET', '/auth/me', { cookie: s.cookie! })).status).toBe(401);
    expect((await auditOf(u.id, 'console_user.disable')).length).toBe(1);

    const v = await c.user('merchant', m);
    const vs = await c.login(v.email, v.password);
    const reset = await cli('reset', v.id);
    expect(reset.code, reset.err).toBe(0);
    const pw = JSON.parse(reset.out).temporary_password as string;
    expect(pw).not.toBe(v.password);
    expect((await c.call('GET', '/auth/me', { cookie: vs.cookie! })).status).toBe(401);
    expect((await c.login(v.email, v.password)).status).toBe(401);
    expect((await c.login(v.email, pw)).status).toBe(200);
    expect((await auditOf(v.id, 'console_user.reset'))[0]!.actor_kind).toBe('cli');

    const unknown = await cli('disable', 'cu_000000000000000000000000');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('No such console user');
  }, 120_000);
});
