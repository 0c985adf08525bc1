import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, type ConsoleApp, startConsoleApp, totpCode } from '../support/console-auth-app.js';

// The console's sign-in on the whole console (registerConsole): passwords, TOTP (with replay refused), recovery codes,
// cookie flags, session fixation, sign-out and sign out everywhere, idle and absolute timeouts, disabled users, CSRF on
// the sign-in API's mutations, the operators' TOTP enrollment gate, password change.

let c: ConsoleApp;
beforeAll(async () => {
  c = await startConsoleApp();
}, 60_000);
afterAll(async () => c?.close());

const sessions = (userId: string) =>
  c.t.db.selectFrom('console_sessions').selectAll().where('user_id', '=', userId).orderBy('created_at').execute();
const auditOf = (objectId: string, action: string) =>
  c.t.db.selectFrom('console_audit').selectAll().where('object_id', '=', objectId).where('action', '=', action).execute();

describe('sign-in', () => {
  it('signs in with password and TOTP; refuses a missing, wrong or replayed code; a recovery code works once', async () => {
    const op = await c.operator();
    expect((await auditOf(op.id, 'auth.totp_enroll')).length).toBe(1);
    const before = (await sessions(op.id)).length;

    const noCode = await c.login(op.email, op.password);
    expect(noCode.status).toBe(401);
    expect(noCode.json.error.code).toBe('totp_required');
    expect(noCode.cookie).toBeUndefined();
    expect((await sessions(op.id)).length).toBe(before);

    const wrong = await c.login(op.email, op.password, { totp_code: totpCode(op.secret, 5) });
    expect(wrong.status).toBe(401);
    expect(wrong.json.error.code).toBe('totp_invalid');

    // The confirmation used the current step's code: the next step's code signs in, and only once.
    const code = totpCode(op.secret, 1);
    const ok = await c.login(op.email.toLowerCase(), op.password, { totp_code: code });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ user: { id: op.id, role: 'operator', totp_enabled: true }, totp_enrollment_required: false });
    expect(ok.cookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const replay = await c.login(op.email, op.password, { totp_code: code });
    expect(replay.status).toBe(401);
    expect(replay.json.error.code).toBe('totp_invalid');

    const me = await c.call('GET', '/auth/me', { cookie: ok.cookie! });
    expect(me.status).toBe(200);
    expect(me.json.csrf_token).toBe(ok.json.csrf_token);

    // The recovery codes: ten, each once.
    const codes = (await c.t.db.selectFrom('console_recovery_codes').selectAll().where('user_id', '=', op.id).execute()).length;
    expect(codes).toBe(10);
    const u = await c.user('operator');
    const l = await c.login(u.email, u.password);
    const { recoveryCodes } = await c.enroll({ cookie: l.cookie!, csrf: l.json.csrf_token });
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    const first = await c.login(u.email, u.password, { recovery_code: recoveryCodes[3]!.toUpperCase() });
    expect(first.status).toBe(200);
    const again = await c.login(u.email, u.password, { recovery_code: recoveryCodes[3]! });
    expect(again.status).toBe(401);
    expect(again.json.error.code).toBe('totp_invalid');
    expect((await auditOf(u.id, 'auth.login')).map((a) => a.detail)).toContain('password and a recovery code');
    expect((await auditOf(u.id, 'auth.login_failed')).map((a) => a.detail)).toContain('totp_invalid');
  });

  it('answers an unknown email, a wrong password and a disabled user alike (401 invalid_credentials), audited', async () => {
    const u = await c.user('merchant', await c.merchant());
    const unknown = await c.login('nobody@console.test', 'whatever-password', {}, { ip: '10.1.0.1' });
    const wrong = await c.login(u.email, 'not-the-password', {}, { ip: '10.1.0.1' });
    await c.t.db.updateTable('console_users').set({ disabled_at: sql`now()` }).where('id', '=', u.id).execute();
    const disabled = await c.login(u.email, u.password, {}, { ip: '10.1.0.1' });
    for (const r of [unknown, wrong, disabled]) {
      expect(r.status).toBe(401);
      expect(r.json.error).toMatchObject({ code: 'invalid_credentials', message: 'The email or password is not right.' });
      expect(r.cookie).toBeUndefined();
    }
    expect((await auditOf(u.id, 'auth.login_failed')).length).toBe(2);
    const anon = await c.t.db
      .selectFrom('console_audit')
      .selectAll()
      .where('action', '=', 'auth.login_failed')
      .where('actor_email', '=', 'nobody@console.test')
      .execute();
    expect(anon).toHaveLength(1);
    expect(anon[0]!.ip).toBe('10.1.0.1');
  });

  it('sets the cookie HttpOnly, SameSite=Strict, Path=<base>/, Secure (and not Secure when secureCookies is off)', async () => {
    const u = await c.user('merchant', await c.merchant(), { firstSignIn: true });
    const r = await c.login(u.email, u.password);
    expect(r.status).toBe(200);
    const parts = r.setCookie!.split('; ');
    expect(parts).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Strict', `Path=${BASE}/`, 'Secure']));
    expect(r.json.user).toMatchObject({ must_change_password: true, totp_enabled: false });
    expect(r.json.totp_enrollment_required).toBe(false);

    const dev = await startConsoleApp({ secureCookies: false });
    try {
      const d = await dev.user('operator');
      const dr = await dev.login(d.email, d.password);
      expect(dr.status).toBe(200);
      expect(dr.setCookie).toContain('HttpOnly');
      expect(dr.setCookie).not.toContain('Secure');
    } finally {
      await dev.close();
    }
  });

  it('issues a new session at every sign-in: a cookie sent with the login is not kept and is revoked', async () => {
    const u = await c.user('merchant', await c.merchant());
    const first = await c.login(u.email, u.password);
    const planted = first.cookie!;
    expect((await c.call('GET', '/auth/me', { cookie: planted })).status).toBe(200);
    const second = await c.login(u.email, u.password, {}, { cookie: planted });
    expect(second.status).toBe(200);
    expect(second.cookie).toBeDefined();
    expect(second.cookie).not.toBe(planted);
    expect(second.json.csrf_token).not.toBe(first.json.csrf_token);
    const old = await c.call('GET', '/auth/me', { cookie: planted });
    expect(old.status).toBe(401);
    expect(old.json.error.code).toBe('not_signed_in');
    expect((await c.call('GET', '/auth/me', { cookie: second.cookie! })).status).toBe(200);
    // A made-up cookie sent with a login never becomes a session either.
    const madeUp = 'A'.repeat(43);
    const third = await c.login(u.email, u.password, {}, { cookie: madeUp });
    expect(third.cookie).not.toBe(madeUp);
    expect((await c.call('GET', '/auth/me', { cookie: madeUp })).status).toBe(401);
  });
});

describe('sessions', () => {
  it('logout ends this session only; logout-all ends every session of the user; both audited', async () => {
    const u = await c.user('merchant', await c.merchant());
    const a = await c.login(u.email, u.password);
    const b = await c.login(u.email, u.password);
    const d = await c.login(u.email, u.password);
    const out = await c.call('POST', '/auth/logout', { cookie: a.cookie!, csrf: a.json.csrf_token });
    expect(out.status).toBe(200);
    expect(out.setCookie).toMatch(/^sp_console=; .*Max-Age=0/);
    expect((await c.call('GET', '/auth/me', { cookie: a.cookie! })).status).toBe(401);
    expect((await c.call('GET', '/auth/me', { cookie: b.cookie! })).status).toBe(200);
    const all = await c.call('POST', '/auth/logout-all', { cookie: b.cookie!, csrf: b.json.csrf_token });
    expect(all.status).toBe(200);
    expect((await c.call('GET', '/auth/me', { cookie: b.cookie! })).status).toBe(401);
    expect((await c.call('GET', '/auth/me', { cookie: d.cookie! })).status).toBe(401);
    expect((await auditOf(u.id, 'auth.logout')).length).toBe(1);
    const [row] = await auditOf(u.id, 'auth.logout_all');
    expect(row!.detail).toBe('2 session(s) revoked');
    expect(row!.actor_id).toBe(u.id);
  });

  it('ends a session idle longer than the idle timeout, and one past its absolute expiry', async () => {
    const u = await c.user('merchant', await c.merchant());
    const idle = await c.login(u.email, u.password);
    const old = await c.login(u.email, u.password);
    const fresh = await c.login(u.email, u.password);
    const rows = await sessions(u.id);
    const [idleRow, oldRow] = [rows.at(-3)!, rows.at(-2)!];
    await c.t.db
      .updateTable('console_sessions')
      .set({ last_seen_at: sql`now() - interval '31 minutes'` })
      .where('id_hash', '=', idleRow.id_hash)
      .execute();
    await c.t.db
      .updateTable('console_sessions')
      .set({ expires_at: sql`now() - interval '1 second'` })
      .where('id_hash', '=', oldRow.id_hash)
      .execute();
    expect((await c.call('GET', '/auth/me', { cookie: idle.cookie! })).status).toBe(401);
    expect((await c.call('GET', '/auth/me', { cookie: old.cookie! })).status).toBe(401);
    expect((await c.call('GET', '/auth/me', { cookie: fresh.cookie! })).status).toBe(200);
    // A request more than a minute after the last one moves last_seen_at (the idle clock restarts).
    const freshHash = rows.at(-1)!.id_hash;
    await c.t.db
      .updateTable('console_sessions')
      .set({ last_seen_at: sql`now() - interval '29 minutes'` })
      .where('id_hash', '=', freshHash)
      .execute();
    expect((await c.call('GET', '/auth/me', { cookie: fresh.cookie! })).status).toBe(200);
    const touched = await c.t.db
      .selectFrom('console_sessions')
      .select('last_seen_at')
      .where('id_hash', '=', freshHash)
      .executeTakeFirstOrThrow();
    expect(Date.now() - touched.last_seen_at.getTime()).toBeLessThan(60_000);
  });

  it("refuses a disabled user's live session", async () => {
    const u = await c.user('merchant', await c.merchant());
    const s = await c.login(u.email, u.password);
    expect((await c.call('GET', '/auth/me', { cookie: s.cookie! })).status).toBe(200);
    await c.t.db.updateTable('console_users').set({ disabled_at: sql`now()` }).where('id', '=', u.id).execute();
    const r = await c.call('GET', '/auth/me', { cookie: s.cookie! });
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('not_signed_in');
  });

  it("refuses the sign-in API's mutations without the session's CSRF token (403), changing nothing", async () => {
    const u = await c.user('merchant', await c.merchant(), { firstSignIn: true });
    const s = await c.login(u.email, u.password);
    for (const url of ['/auth/logout', '/auth/logout-all', '/auth/totp/setup', '/auth/password']) {
      const none = await c.call('POST', url, { cookie: s.cookie!, body: { current_password: u.password, new_password: 'x'.repeat(20) } });
      expect(none.status, url).toBe(403);
      expect(none.json.error.code).toBe('csrf_token_invalid');
      const other = await c.call('POST', url, { cookie: s.cookie!, csrf: 'A'.repeat(43) });
      expect(other.status, url).toBe(403);
    }
    expect((await c.call('GET', '/auth/me', { cookie: s.cookie! })).status).toBe(200);
    const user = await c.t.db.selectFrom('console_users').selectAll().where('id', '=', u.id).executeTakeFirstOrThrow();
    expect(user.totp_secret_enc).toBeNull();
    expect(user.must_change_password).toBe(true);
  });

  it('answers 401 not_signed_in without a cookie', async () => {
    const r = await c.call('GET', '/auth/me');
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('not_signed_in');
    expect((await c.call('GET', '/users')).status).toBe(401);
  });
});

describe('operators must enroll TOTP', () => {
  it('signs an operator without TOTP in with totp_enrollment_required, and answers 403 elsewhere until it confirms', async () => {
    const u = await c.user('operator');
    const l = await c.login(u.email, u.password);
    expect(l.status).toBe(200);
    expect(l.json.totp_enrollment_required).toBe(true);
    const s = { cookie: l.cookie!, csrf: l.json.csrf_token as string };
    const gated = await c.call('GET', '/users', s);
    expect(gated.status).toBe(403);
    expect(gated.json.error.code).toBe('totp_enrollment_required');
    expect((await c.call('GET', '/audit', s)).status).toBe(403);
    expect((await c.call('GET', '/auth/me', s)).json.totp_enrollment_required).toBe(true);

    const setup = await c.call('POST', '/auth/totp/setup', s);
    expect(setup.status).toBe(200);
    expect(setup.json.otpauth_url).toMatch(/^otpauth:\/\/totp\/.*secret=/);
    const row = await c.t.db.selectFrom('console_users').selectAll().where('id', '=', u.id).executeTakeFirstOrThrow();
    expect(row.totp_secret_enc).not.toContain(setup.json.secret);
    expect(row.totp_enabled_at).toBeNull();
    const bad = await c.call('POST', '/auth/totp/confirm', { ...s, body: { code: totpCode(setup.json.secret, 4) } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('totp_invalid');
    expect((await c.call('GET', '/users', s)).status).toBe(403);
    const ok = await c.call('POST', '/auth/totp/confirm', { ...s, body: { code: totpCode(setup.json.secret) } });
    expect(ok.status).toBe(200);
    expect(ok.json.recovery_codes).toHaveLength(10);
    expect((await c.call('GET', '/users', s)).status).toBe(200);
    const again = await c.call('POST', '/auth/totp/setup', s);
    expect(again.status).toBe(409);
    expect(
      (await c.t.db.selectFrom('console_recovery_codes').select('code_hash').where('user_id', '=', u.id).execute()).map((r) => r.code_hash),
    ).not.toContain(ok.json.recovery_codes[0]);
  });

  it('offers TOTP to a merchant user without requiring it', async () => {
    const m = await c.merchant();
    const u = await c.user('merchant', m);
    const l = await c.login(u.email, u.password);
    expect(l.json.totp_enrollment_required).toBe(false);
    const s = { cookie: l.cookie!, csrf: l.json.csrf_token as string };
    expect((await c.call('GET', '/audit', s)).status).toBe(200);
  });
});

describe('password change', () => {
  it('answers 403 password_change_required everywhere but the sign-in API until a temporary password is changed', async () => {
    const u = await c.user('operator', undefined, { firstSignIn: true });
    const l = await c.login(u.email, u.password);
    expect(l.status).toBe(200);
    expect(l.json.user.must_change_password).toBe(true);
    const s = { cookie: l.cookie!, csrf: l.json.csrf_token as string };
    for (const path of ['/users', '/payments', '/overview']) {
      const gated = await c.call('GET', path, s);
      expect(gated.status).toBe(403);
      expect(gated.json.error.code).toBe('password_change_required');
    }
    // The password comes first, then (an operator) TOTP: the gate names what is asked now.
    const changed = await c.call('POST', '/auth/password', {
      ...s,
      body: { current_password: u.password, new_password: 'a-long-new-password' },
    });
    expect(changed.status).toBe(200);
    const next = await c.call('GET', '/users', s);
    expect(next.status).toBe(403);
    expect(next.json.error.code).toBe('totp_enrollment_required');
    await c.enroll(s);
    expect((await c.call('GET', '/users', s)).status).toBe(200);
  });

  it('needs the current password and 12 characters; clears must_change_password; ends the other sessions', async () => {
    const u = await c.user('merchant', await c.merchant());
    const a = await c.login(u.email, u.password);
    const b = await c.login(u.email, u.password);
    const s = { cookie: a.cookie!, csrf: a.json.csrf_token as string };
    const short = await c.call('POST', '/auth/password', { ...s, body: { current_password: u.password, new_password: 'short-pass1' } });
    expect(short.status).toBe(400);
    expect(short.json.error.code).toBe('password_too_short');
    const wrong = await c.call('POST', '/auth/password', {
      ...s,
      body: { current_password: 'wrong-password', new_password: 'a-long-new-password' },
    });
    expect(wrong.status).toBe(403);
    expect((await c.call('GET', '/auth/me', { cookie: b.cookie! })).status).toBe(200);
    const ok = await c.call('POST', '/auth/password', {
      ...s,
      body: { current_password: u.password, new_password: 'a-long-new-password' },
    });
    expect(ok.status).toBe(200);
    const me = await c.call('GET', '/auth/me', s);
    expect(me.json.user.must_change_password).toBe(false);
    expect((await c.call('GET', '/auth/me', { cookie: b.cookie! })).status).toBe(401);
    expect((await c.login(u.email, u.password)).status).toBe(401);
    expect((await c.login(u.email, 'a-long-new-password')).status).toBe(200);
    const [row] = await auditOf(u.id, 'auth.password_change');
    expect(row!.detail).toBe('1 other session(s) revoked');
    expect(JSON.stringify({ ...row, id: String(row!.id) })).not.toContain('a-long-new-password');
  });
});
