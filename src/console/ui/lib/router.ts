// A tiny hash router: `#/payments/cs_1?status=paid&network=ethereum`. The hash keeps every page's state (filters,
// sort, cursor) addressable under any path prefix with no server fallback.
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  /** Path segments after `#/`, e.g. ['payments', 'cs_1']. */
  segments: string[];
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [path = '', qs = ''] = raw.split('?', 2);
  return { segments: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(qs) };
}

export function hrefFor(segments: string[], query?: Record<string, string | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v) params.set(k, v);
  const qs = params.toString();
  return `#/${segments.map(encodeURIComponent).join('/')}${qs ? `?${qs}` : ''}`;
}

export function navigate(segments: string[], query?: Record<string, string | undefined | null>): void {
  window.location.hash = hrefFor(segments, query);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseHash(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

/** The current page's query as a plain object, and a setter that rewrites it (keeping the path). */
export function useQueryState(): [Record<string, string>, (patch: Record<string, string | undefined | null>, replace?: boolean) => void] {
  const route = useRoute();
  const current = Object.fromEntries(route.query.entries());
  const set = (patch: Record<string, string | undefined | null>, replace = false) => {
    const next: Record<string, string | undefined | null> = replace ? { ...patch } : { ...current, ...patch };
    navigate(route.segments, next);
  };
  return [current, set];
}
