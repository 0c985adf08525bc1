// Who is signed in: GET api/auth/me (null when not signed in), kept in the query cache under ['me'].
import { type QueryClient, useQuery, useQueryClient } from '@tanstack/preact-query';
import type { AuthState } from '../../contract/auth.js';
import { ApiFailure, api, setCsrfToken } from './api.js';

export type { AuthState };
export type Role = AuthState['user']['role'];

export async function fetchMe(): Promise<AuthState | null> {
  try {
    const me = await api.get<AuthState>('auth/me', undefined, { quiet401: true });
    setCsrfToken(me.csrf_token);
    return me;
  } catch (e) {
    if (e instanceof ApiFailure && e.status === 401) {
      setCsrfToken(null);
      return null;
    }
    throw e;
  }
}

/** Signed out: every cached answer but ['me'] goes (the observer of ['me'] must keep its query to see the null). */
export function forgetAll(client: QueryClient): void {
  client.removeQueries({ predicate: (q) => q.queryKey[0] !== 'me' });
}

export function useMe() {
  return useQuery({ queryKey: ['me'], queryFn: fetchMe, retry: false, staleTime: 60_000 });
}

/** After a sign-in (or TOTP/password change): the new state, its CSRF token, everything else refetched. */
export function useSetMe(): (me: AuthState | null) => void {
  const client = useQueryClient();
  return (me) => {
    setCsrfToken(me?.csrf_token ?? null);
    if (!me) forgetAll(client);
    client.setQueryData(['me'], me);
  };
}
