// Endpoint labels for logs and metrics: an RPC URL without anything that may be a credential. Providers put API keys
// in user info (https://user:key@host), in the query (?apikey=...) or as a path segment (/v2/<key>); all three go.

const KEY_LIKE = /^[A-Za-z0-9_-]{16,}$/;

/** `https://host/v2/***`: scheme, host and port kept; user info, query, fragment and key-like path segments replaced. */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return '<invalid url>';
  }
  const path = u.pathname
    .split('/')
    .map((seg) => (KEY_LIKE.test(seg) || (/\d/.test(seg) && seg.length >= 12) ? '***' : seg))
    .join('/');
  const auth = u.username || u.password ? '***@' : '';
  const query = u.search ? '?***' : '';
  return `${u.protocol}//${auth}${u.host}${path === '/' ? '' : path}${query}`;
}

/** `text` with every occurrence of `url` (and of its pieces that may be secret) replaced by `label`. */
export function scrubUrl(text: string, url: string, label: string): string {
  let out = text.split(url).join(label);
  try {
    const u = new URL(url);
    for (const secret of [u.password, u.username, u.search.slice(1), ...u.pathname.split('/').filter((s) => KEY_LIKE.test(s))]) {
      if (secret.length >= 6) out = out.split(secret).join('***');
    }
  } catch {
    /* not a URL: nothing more to scrub */
  }
  return out;
}
