import { type ErrorCodesByStatus, errorCodesOf } from '../../api/openapi/error-catalog.js';
import type { RouteDoc } from './route-doc.js';

// The error codes a console route can answer, by status (docs/errors.md, "The console's API"): what any route meets
// around its handler (consoleRoute, the session hook, the HTTP layer), what a mutation adds (its JSON body and the CSRF
// token), and the route's own (RouteDoc.errors). The document narrows each error response's `error.code` to these,
// and the console test clients check every answer against the document, so a new code shows up as a failing test.

/** Any route: bad input, unknown URL or id, a bug. */
const ANY: ErrorCodesByStatus = {
  400: ['invalid_request', 'parameter_invalid', 'parameter_unknown'],
  404: ['resource_not_found'],
  500: ['internal_error'],
};

/** Behind the console session (consoleRoute): signed in, the role and the merchant scope. */
const SIGNED_IN: ErrorCodesByStatus = { 401: ['not_signed_in'], 403: ['not_permitted'] };

/** Every route outside /auth/ while a temporary password is unchanged or an operator has not turned TOTP on (the session hook). */
const ENROLLED: ErrorCodesByStatus = { 403: ['password_change_required', 'totp_enrollment_required'] };

/** A mutation: its JSON body and, behind the session, the session's CSRF token. */
const BODY: ErrorCodesByStatus = { 400: ['INVALID_JSON'], 413: ['request_too_large'] };
const CSRF: ErrorCodesByStatus = { 403: ['csrf_token_invalid'] };

function merged(...tables: ErrorCodesByStatus[]): ErrorCodesByStatus {
  const out: Record<number, string[]> = {};
  for (const t of tables) for (const [s, codes] of Object.entries(t)) out[Number(s)] = [...(out[Number(s)] ?? []), ...(codes ?? [])];
  return out;
}

/** A route's error codes by status, sorted and without repeats. */
export function consoleErrorCodes(doc: RouteDoc): Map<number, string[]> {
  const session = doc.auth !== 'none';
  const mutation = doc.method !== 'GET';
  const common = merged(
    ANY,
    session ? SIGNED_IN : {},
    session && !doc.url.startsWith('/auth/') ? ENROLLED : {},
    mutation ? BODY : {},
    mutation && session ? CSRF : {},
  );
  return errorCodesOf(doc.errors ?? {}, common);
}
