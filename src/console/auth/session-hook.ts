import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors.js';
import type { ConsoleDeps } from '../deps.js';
import { readSessionCookie } from './cookie.js';
import { enrollmentRequired, resolveSession } from './sessions.js';

// The session hook of the console API scope: for every route but the sign-in, cookie → live session → user →
// req.consoleActor (unset without one: consoleRoute answers 401). Until a user has done what its first sign-in asks,
// everything but the sign-in API (/api/auth/*) answers 403: first `password_change_required` (a password set by an
// operator or the CLI is temporary), then `totp_enrollment_required` (an operator who has not confirmed TOTP yet).

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user's TOTP: true while an operator has not enrolled (set by the session hook). */
    consoleTotpEnrollmentRequired?: boolean;
  }
}

export const totpEnrollmentRequired = (): ApiError =>
  new ApiError(403, 'permission_error', 'totp_enrollment_required', 'Operators must turn on two-factor sign-in (TOTP) first.');

export const passwordChangeRequired = (): ApiError =>
  new ApiError(403, 'permission_error', 'password_change_required', 'Choose a new password first: this one was set for you.');

export function addSessionHook(api: FastifyInstance, deps: ConsoleDeps): void {
  const authPrefix = `${api.prefix}/auth/`;
  const loginUrl = `${authPrefix}login`;
  api.addHook('onRequest', async (req) => {
    const path = req.url.split('?')[0] ?? '';
    if (req.method === 'POST' && path === loginUrl) return;
    const token = readSessionCookie(req);
    if (token === undefined) return;
    const live = await resolveSession(deps, req, token);
    if (!live) return;
    req.consoleActor = live.actor;
    req.consoleTotpEnrollmentRequired = enrollmentRequired(live.user);
    if (path.startsWith(authPrefix)) return;
    if (live.user.must_change_password) throw passwordChangeRequired();
    if (req.consoleTotpEnrollmentRequired) throw totpEnrollmentRequired();
  });
}
