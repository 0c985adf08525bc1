// The console API client: relative URLs (api/... under whatever prefix the console lives), same-origin cookies,
// JSON in and out, the CSRF token on every mutation, the spec's error shape turned into ApiFailure, and a 401 hook
// that sends the app back to the sign-in page.

export interface ApiErrorBody {
  error: { type?: string; code?: string; message?: string; param?: string | null; doc_url?: string | null };
  request_id?: string;
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfter: string | null = null,
  ) {
    super(message);
  }
}

/** The session's CSRF token (from sign-in or `me`) and what a 401 does: this page's state, in one object. */
const session: { csrfToken: string | null; onUnauthorized: (() => void) | null } = { csrfToken: null, onUnauthorized: null };

export function setCsrfToken(token: string | null): void {
  session.csrfToken = token;
}
export function setUnauthorizedHandler(fn: (() => void) | null): void {
  session.onUnauthorized = fn;
}

export type Query = Record<string, string | number | undefined | null>;

export function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const s = params.toString();
  return s ? `${path}?${s}` : path;
}

async function request<T>(method: string, path: string, body?: unknown, opts: { quiet401?: boolean } = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (method !== 'GET') {
    headers['Content-Type'] = 'application/json';
    if (session.csrfToken) headers['X-CSRF-Token'] = session.csrfToken;
  }
  let res: Response;
  try {
    res = await fetch(`api/${path.replace(/^\//, '')}`, {
      method,
      headers,
      credentials: 'same-origin',
      body: method === 'GET' ? undefined : JSON.stringify(body ?? {}),
    });
  } catch (e) {
    throw new ApiFailure(0, 'network_error', e instanceof Error ? e.message : String(e));
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!res.ok) {
    const err = (json as ApiErrorBody | null)?.error;
    const failure = new ApiFailure(
      res.status,
      err?.code ?? `http_${res.status}`,
      err?.message ?? res.statusText,
      res.headers.get('Retry-After'),
    );
    if (res.status === 401 && failure.code === 'not_signed_in' && !opts.quiet401) session.onUnauthorized?.();
    throw failure;
  }
  return json as T;
}

export const api = {
  get: <T>(path: string, query?: Query, opts?: { quiet401?: boolean }) => request<T>('GET', withQuery(path, query), undefined, opts),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, body),
  put: <T>(path: string, body?: unknown) => request<T>('PUT', path, body),
};

/** URL of a download (exports): same relative base as the API. */
export function apiUrl(path: string, query?: Query): string {
  return withQuery(`api/${path.replace(/^\//, '')}`, query);
}

export function errorMessage(e: unknown): string {
  if (e instanceof ApiFailure) return e.message;
  return e instanceof Error ? e.message : String(e);
}
