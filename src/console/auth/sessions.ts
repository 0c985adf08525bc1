import type { FastifyRequest } from 'fastify';
import { getConsoleSession, insertConsoleSession, touchConsoleSession } from '../../ledger/console/sessions.js';
import { type ConsoleUserRecord, getConsoleUser } from '../../ledger/console/users.js';
import type { ConsoleActor } from '../actor.js';
import type { ConsoleDeps } from '../deps.js';
import { newCsrfToken, newSessionToken, sessionIdHash } from './cookie.js';

// Console sessions: a new random token at every sign-in (the cookie), its sha256 as the row's id, a CSRF token, an
// absolute expiry (settings.absoluteTimeoutMs) and an idle timeout (settings.idleTimeoutMs since last_seen_at, touched
// at most once a minute).

const TOUCH_EVERY_MS = 60_000;

export async function startSession(
  deps: ConsoleDeps,
  req: FastifyRequest,
  userId: string,
  secondFactorDone: boolean,
): Promise<{ token: string; idHash: string; csrfToken: string }> {
  const token = newSessionToken();
  const idHash = sessionIdHash(token);
  const csrfToken = newCsrfToken();
  const ua = req.headers['user-agent'];
  await insertConsoleSession(deps.ops.db, {
    idHash,
    userId,
    csrfToken,
    secondFactorDone,
    ip: req.ip,
    userAgent: typeof ua === 'string' ? ua.slice(0, 512) : null,
    expiresAt: new Date(deps.ops.clock.now().getTime() + deps.settings.absoluteTimeoutMs),
  });
  return { token, idHash, csrfToken };
}

export interface LiveSession {
  actor: ConsoleActor;
  user: ConsoleUserRecord;
  secondFactorDone: boolean;
}

/** The session of this cookie if it is live (not revoked, not expired, not idle too long, its user not disabled). */
export async function resolveSession(deps: ConsoleDeps, req: FastifyRequest, token: string): Promise<LiveSession | null> {
  const idHash = sessionIdHash(token);
  const s = await getConsoleSession(deps.ops.db, idHash);
  if (!s || s.revoked_at !== null) return null;
  const now = deps.ops.clock.now().getTime();
  if (s.expires_at.getTime() <= now) return null;
  if (s.last_seen_at.getTime() + deps.settings.idleTimeoutMs <= now) return null;
  const user = await getConsoleUser(deps.ops.db, s.user_id);
  if (!user || user.disabled_at !== null) return null;
  if (now - s.last_seen_at.getTime() >= TOUCH_EVERY_MS) await touchConsoleSession(deps.ops.db, idHash);
  return {
    user,
    secondFactorDone: s.second_factor_done,
    actor: {
      userId: user.id,
      email: user.email,
      role: user.role,
      merchantId: user.merchant_id,
      sessionIdHash: idHash,
      csrfToken: s.csrf_token,
      ip: req.ip,
    },
  };
}

/** An operator must have TOTP: until it has confirmed it, only the sign-in API answers it. */
export const enrollmentRequired = (user: ConsoleUserRecord): boolean => user.role === 'operator' && user.totp_enabled_at === null;
