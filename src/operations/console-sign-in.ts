import { isDemoEmail } from './console-demo.js';
import { ApiError, invalidRequest } from '../domain/errors.js';
import { type AuditActor, appendAudit } from '../ledger/audit/audit-log.js';
import { type AuditWriter, auditWith } from './console-audit.js';
import { consumeRecoveryCode, replaceRecoveryCodes } from '../ledger/console/recovery-codes.js';
import { markSecondFactorDone, revokeUserSessions } from '../ledger/console/sessions.js';
import { type ConsoleUserRecord, enableTotp, getConsoleUser, getConsoleUserByEmail, setConsolePassword } from '../ledger/console/users.js';
import type { OperationsContext } from './context.js';
import {
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  generateRecoveryCodes,
  hashPassword,
  hashRecoveryCode,
  verifyPassword,
} from './console-credentials.js';
import { openTotpSecret, verifyTotpOnce } from './console-totp.js';

// The console's own account actions: checking a sign-in (password, then TOTP or a recovery code), confirming TOTP
// (recovery codes issued once), changing one's password. Sessions, cookies and the login limiter are the console's
// (src/console/auth/); failed sign-ins are audited here.

type SignInOps = Pick<OperationsContext, 'db' | 'box' | 'redis' | 'redisPrefix' | 'clock'>;

export const invalidCredentials = (): ApiError =>
  new ApiError(401, 'authentication_error', 'invalid_credentials', 'The email or password is not right.');

export interface SignInResult {
  user: ConsoleUserRecord;
  /** TOTP (or a recovery code) was checked: the user has TOTP. */
  secondFactorDone: boolean;
  usedRecoveryCode: boolean;
}

/**
 * Checks a sign-in. Throws 401 `invalid_credentials` (unknown email, wrong password and disabled user alike, in the
 * same time), 401 `totp_required` (password right, TOTP enrolled, no code), 401 `totp_invalid` (wrong, reused or
 * expired code, or an unknown or used recovery code). Failures are audited (`auth.login_failed`).
 */
export async function checkSignIn(
  ops: SignInOps,
  input: { email: string; password: string; totpCode?: string; recoveryCode?: string; ip: string; demoAllowed: boolean },
): Promise<SignInResult> {
  // The demo's users (console-demo.ts) exist only for `npm run dev`: elsewhere they are as unknown.
  const user = !input.demoAllowed && isDemoEmail(input.email) ? undefined : await getConsoleUserByEmail(ops.db, input.email.trim());
  const passwordOk = await verifyPassword(user?.password_hash ?? null, input.password);
  const fail = async (code: 'invalid_credentials' | 'totp_invalid') => {
    await appendAudit(
      ops.db,
      { kind: 'console', id: user?.id ?? null, email: user?.email ?? input.email.slice(0, 254), role: user?.role ?? null, ip: input.ip },
      {
        action: 'auth.login_failed',
        objectType: 'console_user',
        objectId: user?.id ?? null,
        merchantId: user?.merchant_id ?? null,
        detail: code,
      },
    );
    return code === 'invalid_credentials'
      ? invalidCredentials()
      : new ApiError(401, 'authentication_error', 'totp_invalid', 'The authentication code is not right (or was used already).');
  };
  if (!user || !passwordOk || user.disabled_at !== null) throw await fail('invalid_credentials');
  if (user.totp_enabled_at === null) return { user, secondFactorDone: false, usedRecoveryCode: false };
  const totpCode = input.totpCode?.trim();
  const recoveryCode = input.recoveryCode?.trim();
  if (!totpCode && !recoveryCode) {
    throw new ApiError(401, 'authentication_error', 'totp_required', 'Enter the code from your authenticator app (or a recovery code).');
  }
  if (totpCode) {
    const secret = openTotpSecret(ops, user);
    if (secret === null || !(await verifyTotpOnce(ops, user.id, secret, totpCode))) throw await fail('totp_invalid');
    return { user, secondFactorDone: true, usedRecoveryCode: false };
  }
  if (!(await consumeRecoveryCode(ops.db, user.id, hashRecoveryCode(recoveryCode!)))) throw await fail('totp_invalid');
  return { user, secondFactorDone: true, usedRecoveryCode: true };
}

/**
 * Confirms the user's pending TOTP secret with a code from the app: TOTP is on from now, the session's second factor
 * is done, and ten recovery codes are issued (returned once; stored hashed, replacing any older ones).
 */
export async function confirmTotp(
  ops: SignInOps,
  actor: AuditActor & { id: string },
  session: { idHash: string },
  code: string,
  writer?: AuditWriter,
): Promise<{ recoveryCodes: string[] }> {
  const user = await getConsoleUser(ops.db, actor.id);
  if (!user) throw invalidCredentials();
  if (user.totp_enabled_at !== null) throw invalidRequest('totp_already_enabled', 'TOTP is on for this account already.', undefined, 409);
  const secret = openTotpSecret(ops, user);
  if (secret === null) throw invalidRequest('totp_not_started', 'Start with POST /api/auth/totp/setup.', undefined, 409);
  if (!(await verifyTotpOnce(ops, user.id, secret, code.trim()))) {
    throw new ApiError(400, 'invalid_request_error', 'totp_invalid', 'The authentication code is not right.', 'code');
  }
  if (!(await enableTotp(ops.db, user.id)))
    throw invalidRequest('totp_already_enabled', 'TOTP is on for this account already.', undefined, 409);
  const recoveryCodes = generateRecoveryCodes();
  await replaceRecoveryCodes(ops.db, user.id, recoveryCodes.map(hashRecoveryCode));
  await markSecondFactorDone(ops.db, session.idHash);
  await auditWith(
    ops.db,
    actor,
    writer,
  )({
    action: 'auth.totp_enroll',
    objectType: 'console_user',
    objectId: user.id,
    merchantId: user.merchant_id,
    detail: `${recoveryCodes.length} recovery codes issued`,
  });
  return { recoveryCodes };
}

/** Changes the signed-in user's password (the current one checked); must_change_password cleared; other sessions revoked. */
export async function changePassword(
  ops: SignInOps,
  actor: AuditActor & { id: string },
  session: { idHash: string },
  input: { currentPassword: string; newPassword: string },
  writer?: AuditWriter,
): Promise<void> {
  const user = await getConsoleUser(ops.db, actor.id);
  if (!user || !(await verifyPassword(user.password_hash, input.currentPassword))) {
    throw new ApiError(403, 'permission_error', 'current_password_invalid', 'The current password is not right.', 'current_password');
  }
  if (input.newPassword.length < MIN_PASSWORD_LENGTH || input.newPassword.length > MAX_PASSWORD_LENGTH) {
    throw invalidRequest(
      'password_too_short',
      `The new password needs ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters.`,
      'new_password',
    );
  }
  if (input.newPassword === input.currentPassword) {
    throw invalidRequest('password_unchanged', 'The new password must differ from the current one.', 'new_password');
  }
  await setConsolePassword(ops.db, user.id, await hashPassword(input.newPassword), false);
  const revoked = await revokeUserSessions(ops.db, user.id, session.idHash);
  await auditWith(
    ops.db,
    actor,
    writer,
  )({
    action: 'auth.password_change',
    objectType: 'console_user',
    objectId: user.id,
    merchantId: user.merchant_id,
    detail: `${revoked} other session(s) revoked`,
  });
}
