import { Secret, TOTP } from 'otpauth';
import { setPendingTotp } from '../ledger/console/users.js';
import { totpSecretAad } from '../security/sealed-column-aad.js';
import type { OperationsContext } from './context.js';

// TOTP of console users (RFC 6238 via otpauth): 30-second steps, 6 digits, SHA-1 (what every authenticator app
// reads), a window of one step either side for clock drift. A code once accepted is refused again: the step used is
// remembered per user in Redis (SET NX, for longer than the window), so a code seen over a shoulder or replayed from a
// log does not sign in twice.

export const TOTP_ISSUER = 'Stablecoin payments console';
const PERIOD = 30;
const WINDOW = 1;

const totpOf = (secretBase32: string, label = 'console') =>
  new TOTP({ issuer: TOTP_ISSUER, label, algorithm: 'SHA1', digits: 6, period: PERIOD, secret: Secret.fromBase32(secretBase32) });

/** A new pending secret for the user (sealed in console_users until confirmed), with the otpauth:// URL for a QR code. */
export async function beginTotpSetup(
  ops: Pick<OperationsContext, 'db' | 'box'>,
  user: { id: string; email: string },
): Promise<{ secret: string; otpauthUrl: string } | null> {
  const secret = new Secret({ size: 20 }).base32;
  const stored = await setPendingTotp(ops.db, user.id, ops.box.seal(secret, totpSecretAad(user.id)));
  if (!stored) return null;
  return { secret, otpauthUrl: totpOf(secret, user.email).toString() };
}

/** The code of the current step for a secret (the demo's `console demo-code`; tests play the authenticator app with it). */
export function currentTotpCode(secretBase32: string, at: Date): string {
  return totpOf(secretBase32).generate({ timestamp: at.getTime() });
}

/** The user's TOTP secret (pending or enabled), opened; null when it has none. */
export function openTotpSecret(ops: Pick<OperationsContext, 'box'>, user: { id: string; totp_secret_enc: string | null }): string | null {
  return user.totp_secret_enc === null ? null : ops.box.open(user.totp_secret_enc, totpSecretAad(user.id));
}

/**
 * Whether `code` is the user's code of the current step (±1) and was not accepted before: the step it belongs to is
 * claimed in Redis atomically (SET NX), so the same code is refused for as long as it could be valid.
 */
export async function verifyTotpOnce(
  ops: Pick<OperationsContext, 'redis' | 'redisPrefix' | 'clock'>,
  userId: string,
  secretBase32: string,
  code: string,
): Promise<boolean> {
  if (!/^\d{6}$/.test(code)) return false;
  const now = ops.clock.now().getTime();
  const delta = totpOf(secretBase32).validate({ token: code, timestamp: now, window: WINDOW });
  if (delta === null) return false;
  const step = Math.floor(now / 1000 / PERIOD) + delta;
  const key = `${ops.redisPrefix}:console:totp-used:${userId}:${step}`;
  const claimed = await ops.redis.set(key, '1', 'EX', PERIOD * (2 * WINDOW + 2), 'NX');
  return claimed === 'OK';
}
