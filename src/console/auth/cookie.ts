import { createHash, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

// The console's session cookie `sp_console`: 32 random bytes (base64url), HttpOnly, SameSite=Strict, Path=<console
// base>/, Secure unless the settings turn it off (development over plain http). The database keeps only its sha256.

export const SESSION_COOKIE = 'sp_console';

export const newSessionToken = (): string => randomBytes(32).toString('base64url');
export const newCsrfToken = (): string => randomBytes(32).toString('base64url');
export const sessionIdHash = (token: string): string => createHash('sha256').update(token).digest('hex');

/** The session cookie's value, if the request carries a well-formed one. */
export function readSessionCookie(req: FastifyRequest): string | undefined {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    if (/^[A-Za-z0-9_-]{43}$/.test(value)) return value;
  }
  return undefined;
}

export interface CookieOptions {
  path: string;
  secure: boolean;
}

export function sessionCookie(token: string, o: CookieOptions, maxAgeSeconds: number): string {
  return [
    `${SESSION_COOKIE}=${token}`,
    `Path=${o.path}`,
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(o.secure ? ['Secure'] : []),
  ].join('; ');
}

export function clearedSessionCookie(o: CookieOptions): string {
  return [`${SESSION_COOKIE}=`, `Path=${o.path}`, 'Max-Age=0', 'HttpOnly', 'SameSite=Strict', ...(o.secure ? ['Secure'] : [])].join('; ');
}
