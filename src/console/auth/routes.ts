import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError, invalidRequest } from '../../domain/errors.js';
import { appendAudit } from '../../ledger/audit/audit-log.js';
import { revokeConsoleSession, revokeUserSessions } from '../../ledger/console/sessions.js';
import { getConsoleUser } from '../../ledger/console/users.js';
import { changePassword, checkSignIn, confirmTotp } from '../../operations/console-sign-in.js';
import { beginTotpSetup } from '../../operations/console-totp.js';
import { auditActorOf } from '../actor.js';
import {
  type Ok,
  type TotpConfirm,
  type TotpSetup,
  authStateSchema,
  okSchema,
  totpConfirmSchema,
  totpSetupSchema,
} from '../contract/auth.js';
import type { ConsoleDeps } from '../deps.js';
import { routeDoc } from '../openapi/route-doc.js';
import { consoleRoute, parse } from '../route.js';
import { type CookieOptions, clearedSessionCookie, readSessionCookie, sessionCookie, sessionIdHash } from './cookie.js';
import { currentLockout, recordFailure } from './login-limiter.js';
import { startSession } from './sessions.js';
import { authState } from './views.js';

// The sign-in API (/api/auth/*): login, me, logout, sign out everywhere, TOTP setup and confirmation, password change.
// Every mutation but the login goes through consoleRoute (signed in, CSRF token checked, audit row).

const loginBody = z.strictObject({
  email: z.string().min(1).max(254),
  password: z.string().min(1).max(256),
  totp_code: z.string().max(16).optional(),
  recovery_code: z.string().max(64).optional(),
});

const OK: Ok = { ok: true };

export function registerAuthRoutes(api: FastifyInstance, deps: ConsoleDeps): void {
  const { db } = deps.ops;
  const base = api.prefix.replace(/\/api$/, '');
  const cookie: CookieOptions = { path: `${base}/`, secure: deps.settings.secureCookies };

  const loginDoc = routeDoc({
    method: 'POST',
    url: '/auth/login',
    summary: 'Sign in: sets the session cookie and answers the CSRF token of the session',
    auth: 'none',
    body: loginBody,
    response: authStateSchema,
    errors: { 401: ['invalid_credentials', 'totp_required', 'totp_invalid'], 429: ['login_locked'] },
  });
  api.post('/auth/login', { config: loginDoc }, async (req, reply) => {
    const body = parse(loginBody, req.body ?? {}, 'body');
    const lock = await currentLockout(deps, body.email, req.ip);
    if (lock) {
      reply.header('Retry-After', String(Math.max(1, Math.ceil(lock.retryAfterMs / 1000))));
      throw lock.error;
    }
    let result: Awaited<ReturnType<typeof checkSignIn>>;
    try {
      result = await checkSignIn(deps.ops, {
        email: body.email,
        password: body.password,
        ...(body.totp_code !== undefined ? { totpCode: body.totp_code } : {}),
        ...(body.recovery_code !== undefined ? { recoveryCode: body.recovery_code } : {}),
        ip: req.ip,
        demoAllowed: deps.settings.demo,
      });
    } catch (err) {
      if (err instanceof ApiError && (err.code === 'invalid_credentials' || err.code === 'totp_invalid')) {
        if (await recordFailure(deps, body.email, req.ip)) {
          await appendAudit(
            db,
            { kind: 'console', id: null, email: body.email.slice(0, 254), ip: req.ip },
            { action: 'auth.lockout', objectType: 'console_user', detail: 'too many failed sign-ins (account or address)' },
          );
        }
      }
      throw err;
    }
    // A cookie sent with the login never becomes the session (fixation): it is revoked, and a new one is issued.
    const sent = readSessionCookie(req);
    if (sent !== undefined) await revokeConsoleSession(db, sessionIdHash(sent));
    const { user } = result;
    const session = await startSession(deps, req, user.id, result.secondFactorDone);
    reply.header('Set-Cookie', sessionCookie(session.token, cookie, Math.floor(deps.settings.absoluteTimeoutMs / 1000)));
    await appendAudit(
      db,
      { kind: 'console', id: user.id, email: user.email, role: user.role, ip: req.ip },
      {
        action: 'auth.login',
        objectType: 'console_user',
        objectId: user.id,
        merchantId: user.merchant_id,
        detail: result.usedRecoveryCode ? 'password and a recovery code' : result.secondFactorDone ? 'password and TOTP' : 'password',
      },
    );
    return authState(user, session.csrfToken);
  });

  consoleRoute(api, db, {
    method: 'GET',
    url: '/auth/me',
    summary: 'The signed-in user and the session CSRF token',
    response: authStateSchema,
    async handler({ actor }) {
      const user = await getConsoleUser(db, actor.userId);
      if (!user) throw new ApiError(401, 'authentication_error', 'not_signed_in', 'Sign in to the console first.');
      return authState(user, actor.csrfToken);
    },
  });

  consoleRoute(api, db, {
    method: 'POST',
    url: '/auth/logout',
    summary: 'Sign out (this session)',
    response: okSchema,
    async handler({ actor, reply, audit }) {
      await revokeConsoleSession(db, actor.sessionIdHash);
      reply.header('Set-Cookie', clearedSessionCookie(cookie));
      await audit({ action: 'auth.logout', objectType: 'console_user', objectId: actor.userId, merchantId: actor.merchantId });
      return OK;
    },
  });

  consoleRoute(api, db, {
    method: 'POST',
    url: '/auth/logout-all',
    summary: 'Sign out everywhere (every session of the user)',
    response: okSchema,
    async handler({ actor, reply, audit }) {
      const n = await revokeUserSessions(db, actor.userId);
      reply.header('Set-Cookie', clearedSessionCookie(cookie));
      await audit({
        action: 'auth.logout_all',
        objectType: 'console_user',
        objectId: actor.userId,
        merchantId: actor.merchantId,
        detail: `${n} session(s) revoked`,
      });
      return OK;
    },
  });

  consoleRoute(api, db, {
    method: 'POST',
    url: '/auth/totp/setup',
    summary: 'Start TOTP setup: a pending secret and its otpauth URL',
    response: totpSetupSchema,
    errors: { 409: ['totp_already_enabled'] },
    async handler({ actor, audit }) {
      const setup = await beginTotpSetup(deps.ops, { id: actor.userId, email: actor.email });
      if (!setup) throw invalidRequest('totp_already_enabled', 'TOTP is on for this account already.', undefined, 409);
      await audit({ action: 'auth.totp_setup', objectType: 'console_user', objectId: actor.userId, merchantId: actor.merchantId });
      const out: TotpSetup = { secret: setup.secret, otpauth_url: setup.otpauthUrl };
      return out;
    },
  });

  consoleRoute(api, db, {
    method: 'POST',
    url: '/auth/totp/confirm',
    summary: 'Confirm TOTP with a code: ten recovery codes, shown once',
    response: totpConfirmSchema,
    errors: { 400: ['totp_invalid'], 409: ['totp_not_started', 'totp_already_enabled'] },
    body: z.strictObject({ code: z.string().min(1).max(16) }),
    async handler({ actor, body, audit }) {
      const r = await confirmTotp(
        deps.ops,
        { ...auditActorOf(actor), id: actor.userId },
        { idHash: actor.sessionIdHash },
        body.code,
        audit,
      );
      const out: TotpConfirm = { recovery_codes: r.recoveryCodes };
      return out;
    },
  });

  consoleRoute(api, db, {
    method: 'POST',
    url: '/auth/password',
    summary: 'Change the password (ends the other sessions)',
    response: okSchema,
    errors: { 400: ['password_too_short', 'password_unchanged'], 403: ['current_password_invalid'] },
    body: z.strictObject({ current_password: z.string().min(1).max(256), new_password: z.string().max(256) }),
    async handler({ actor, body, audit }) {
      await changePassword(
        deps.ops,
        { ...auditActorOf(actor), id: actor.userId },
        { idHash: actor.sessionIdHash },
        { currentPassword: body.current_password, newPassword: body.new_password },
        audit,
      );
      return OK;
    },
  });
}
