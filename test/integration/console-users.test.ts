import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleApp, startConsoleApp } from '../support/console-auth-app.js';

// The users page's API on the whole console: list, create (temporary password once), disable (sessions end), reset
// (new password; TOTP, recovery codes and sessions cleared); operators only; bad input changes nothing; audit rows.

let c: ConsoleApp;
let op: Awaited<ReturnType<ConsoleApp['operator']>>;
beforeAll(async () => {
  c = await startConsoleApp();
  op = await c.operator();
}, 60_000);
afterAll(async () => c?.close());

const userCount = async () =>
  Number(
    (
      await c.t.db
        .selectFrom('console_users')
        .select((e) => e.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
const auditOf = (objectId: string, action: string) =>
  c.t.db.selectFrom('console_audit').selectAll().where('object_id', '=', objectId).where('action', '=', action).execute();

describe('users', () => {
  it('creates a merchant user whose temporary password signs in once, must be changed, and is audited without it', async () => {
    const m = await c.merchant();
    const r = await c.call('POST', '/users', { ...op, body: { email: 'Shop.Owner@Example.com', role: 'merchant', merchant_id: m } });
    expect(r.status).toBe(201);
    expect(r.json.user).toMatchObject({
      email: 'Shop.Owner@Example.com',
      role: 'merchant',
      merchant_id: m,
      must_change_password: true,
      disabled: false,
    });
    expect(r.json.password).toMatch(/^[0-9A-Za-z]{20}$/);
    const login = await c.login('shop.owner@example.com', r.json.password);
    expect(login.status).toBe(200);
    expect(login.json.user.must_change_password).toBe(true);
    const [audit] = await auditOf(r.json.user.id, 'console_user.create');
    expect(audit).toMatchObject({ actor_kind: 'console', actor_id: op.id, actor_role: 'operator', merchant_id: m, ip: '127.0.0.1' });
    expect(JSON.stringify(audit!.after)).not.toContain(r.json.password);
    expect(JSON.stringify(audit!.after)).not.toContain('argon2');
    // The list never shows a password or hash.
    const list = await c.call('GET', '/users?limit=100', op);
    expect(list.status).toBe(200);
    expect(list.json.data.map((u: { id: string }) => u.id)).toContain(r.json.user.id);
    expect(JSON.stringify(list.json)).not.toMatch(/argon2|password_hash|totp_secret/);
  });

  it('refuses bad input with 400 (or 404/409) and creates nothing', async () => {
    const before = await userCount();
    const m = await c.merchant();
    const cases: [unknown, number, string][] = [
      [{ email: 'not-an-email', role: 'operator' }, 400, 'parameter_invalid'],
      [{ email: 'a@b.test', role: 'admin' }, 400, 'parameter_invalid'],
      [{ email: 'a@b.test', role: 'merchant' }, 400, 'parameter_missing'],
      [{ email: 'a@b.test', role: 'operator', merchant_id: m }, 400, 'parameter_invalid'],
      [{ email: 'a@b.test', role: 'merchant', merchant_id: 'mch_000000000000000000000000' }, 404, 'resource_not_found'],
      [{ email: 'a@b.test', role: 'operator', extra: 1 }, 400, 'parameter_unknown'],
      [{ email: op.email.toUpperCase(), role: 'operator' }, 409, 'email_in_use'],
    ];
    for (const [body, status, code] of cases) {
      const r = await c.call('POST', '/users', { ...op, body });
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.json.error.code).toBe(code);
    }
    expect(await userCount()).toBe(before);
    expect((await c.call('GET', '/users?limit=0', op)).status).toBe(400);
    expect((await c.call('POST', '/users/not-an-id/disable', op)).status).toBe(400);
    expect((await c.call('POST', '/users/cu_000000000000000000000000/disable', op)).status).toBe(404);
  });

  it('pages the list newest first with next_cursor, filtered by role and merchant', async () => {
    const m = await c.merchant();
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push((await c.user('merchant', m)).id);
    const p1 = await c.call('GET', `/users?limit=2&merchant_id=${m}`, op);
    expect(p1.json.data.map((u: { id: string }) => u.id)).toEqual([made[2], made[1]]);
    expect(p1.json.next_cursor).toBe(made[1]);
    const p2 = await c.call('GET', `/users?limit=2&merchant_id=${m}&cursor=${p1.json.next_cursor}`, op);
    expect(p2.json.data.map((u: { id: string }) => u.id)).toEqual([made[0]]);
    expect(p2.json.next_cursor).toBeNull();
    const ops = await c.call('GET', '/users?role=operator&limit=100', op);
    expect(ops.json.data.every((u: { role: string }) => u.role === 'operator')).toBe(true);
  });

  it('disables a user: its sessions end, it cannot sign in, audited with before and after', async () => {
    const m = await c.merchant();
    const u = await c.user('merchant', m);
    const s = await c.login(u.email, u.password);
    const r = await c.call('POST', `/users/${u.id}/disable`, op);
    expect(r.status).toBe(200);
    expect(r.json.user).toMatchObject({ id: u.id, disabled: true });
    expect((await c.call('GET', '/auth/me', { cookie: s.cookie! })).status).toBe(401);
    expect((await c.login(u.email, u.password)).json.error.code).toBe('invalid_credentials');
    const [a] = await auditOf(u.id, 'console_user.disable');
    expect(a).toMatchObject({ before: expect.objectContaining({ disabled: false }), after: expect.objectContaining({ disabled: true }) });
    // An operator cannot disable itself.
    const self = await c.call('POST', `/users/${op.id}/disable`, op);
    expect(self.status).toBe(403);
  });

  it('resets a user: new temporary password, TOTP and recovery codes cleared, sessions ended', async () => {
    const target = await c.operator();
    const r = await c.call('POST', `/users/${target.id}/reset`, op);
    expect(r.status).toBe(200);
    expect(r.json.password).toMatch(/^[0-9A-Za-z]{20}$/);
    expect(r.json.user).toMatchObject({ totp_enabled: false, must_change_password: true });
    expect((await c.call('GET', '/auth/me', target)).status).toBe(401);
    expect((await c.t.db.selectFrom('console_recovery_codes').selectAll().where('user_id', '=', target.id).execute()).length).toBe(0);
    expect((await c.login(target.email, target.password)).status).toBe(401);
    const again = await c.login(target.email, r.json.password);
    expect(again.status).toBe(200);
    expect(again.json.totp_enrollment_required).toBe(true);
    const [a] = await auditOf(target.id, 'console_user.reset');
    expect(a!.actor_id).toBe(op.id);
    expect(JSON.stringify(a!.after)).not.toContain(r.json.password);
  });

  it('refuses every users route to a merchant user (403), changing nothing', async () => {
    const m = await c.merchant();
    const mu = await c.user('merchant', m);
    const l = await c.login(mu.email, mu.password);
    const s = { cookie: l.cookie!, csrf: l.json.csrf_token as string };
    const before = await userCount();
    const list = await c.call('GET', '/users', s);
    expect(list.status).toBe(403);
    expect(list.json.error.code).toBe('not_permitted');
    expect((await c.call('POST', '/users', { ...s, body: { email: 'x@y.test', role: 'operator' } })).status).toBe(403);
    expect((await c.call('POST', `/users/${op.id}/disable`, s)).status).toBe(403);
    expect((await c.call('POST', `/users/${op.id}/reset`, s)).status).toBe(403);
    expect(await userCount()).toBe(before);
    expect((await c.call('GET', '/auth/me', op)).status).toBe(200);
  });

  it("refuses an operator's users mutation without the CSRF token", async () => {
    const before = await userCount();
    const r = await c.call('POST', '/users', { cookie: op.cookie, body: { email: 'csrf@y.test', role: 'operator' } });
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('csrf_token_invalid');
    expect(await userCount()).toBe(before);
  });
});
