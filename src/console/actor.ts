import type { ConsoleRole } from '../db/console-tables.js';
import type { AuditActor } from '../ledger/audit/audit-log.js';
import { ApiError } from '../domain/errors.js';

// Who is asking: the console user of a signed-in console session (set on the request by the session hook,
// src/console/auth/). Never a merchant API key: the console's API accepts only its own session cookie.

export interface ConsoleActor {
  userId: string;
  email: string;
  role: ConsoleRole;
  /** The one merchant a merchant user sees; null for an operator. */
  merchantId: string | null;
  /** sha256 of the session cookie (console_sessions.id_hash). */
  sessionIdHash: string;
  csrfToken: string;
  ip: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    consoleActor?: ConsoleActor;
  }
}

export const forbidden = (message = 'This page is for operators.'): ApiError =>
  new ApiError(403, 'permission_error', 'not_permitted', message);

/**
 * The merchant a query may read: a merchant user's own, whatever it asked for (asking for another is refused, 403);
 * an operator's choice (undefined: every merchant).
 */
export function merchantScope(actor: ConsoleActor, requested: string | undefined): string | undefined {
  if (actor.role === 'operator') return requested;
  if (requested !== undefined && requested !== actor.merchantId) throw forbidden('This merchant is not yours.');
  return actor.merchantId ?? undefined;
}

/** A merchant user may touch only its own merchant's objects; an object of another merchant answers 403. */
export function assertOwns(actor: ConsoleActor, merchantId: string): void {
  if (actor.role === 'merchant' && actor.merchantId !== merchantId) throw forbidden('This object belongs to another merchant.');
}

export function auditActorOf(actor: ConsoleActor): AuditActor {
  return { kind: 'console', id: actor.userId, email: actor.email, role: actor.role, ip: actor.ip };
}
