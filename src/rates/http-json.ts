import { RateSourceError } from './errors.js';
import { MalformedJsonError, parseLosslessJson, type JsonValue } from './lossless-json.js';
import { isAbortLike } from './abort.js';

const MAX_BODY_BYTES = 1024 * 1024;

export interface HttpJsonResponse {
  status: number;
  body: JsonValue | undefined; // undefined when the body was not JSON (kept for non-2xx answers only)
}

/**
 * GETs a URL and parses the body with the lossless parser. Network errors, timeouts, oversized bodies and a 2xx body
 * that is not JSON become RateSourceError. Non-2xx answers are returned for the caller to interpret.
 */
export async function getJson(
  source: string,
  url: string,
  signal: AbortSignal,
  fetchImpl: typeof fetch = fetch,
): Promise<HttpJsonResponse> {
  let res: Response;
  let text: string;
  try {
    res = await fetchImpl(url, { signal, headers: { accept: 'application/json' }, redirect: 'error' });
    text = await readLimited(res, source);
  } catch (e) {
    if (e instanceof RateSourceError) throw e;
    const why = isAbortLike(e) || signal.aborted ? 'request timed out' : `request failed: ${(e as Error).message}`;
    throw new RateSourceError(source, why, { cause: e });
  }
  let body: JsonValue | undefined;
  try {
    body = parseLosslessJson(text);
  } catch (e) {
    if (!(e instanceof MalformedJsonError)) throw e;
    if (res.ok) throw new RateSourceError(source, `malformed JSON: ${e.message}`, { cause: e });
    body = undefined;
  }
  return { status: res.status, body };
}

async function readLimited(res: Response, source: string): Promise<string> {
  const declared = res.headers.get('content-length');
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) {
    await res.body?.cancel();
    throw new RateSourceError(source, 'response body too large');
  }
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) throw new RateSourceError(source, 'response body too large');
    chunks.push(chunk);
  }
  return new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(chunks));
}

export function trimBaseUrl(url: string): string {
  const u = new URL(url); // throws on a malformed configuration value
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TypeError(`base URL must be http(s): ${url}`);
  return url.replace(/\/+$/, '');
}
