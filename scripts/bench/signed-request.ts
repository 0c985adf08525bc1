import { createHmac, randomUUID } from 'node:crypto';

// A signed merchant API request (docs/api.md "Authentication": Bearer key, timestamp, nonce, HMAC-SHA256 of
// `<timestamp>.<nonce>.<body>` with the key's secret), in the shape autocannon's `requests` and `fetch` both take.
// The benchmarks' one signer of requests: api.ts, processes.ts and scale/measure.ts.

export interface ApiKey {
  key: string;
  secret: string;
}

export interface SignedRequest {
  method: 'GET' | 'POST';
  path: string;
  body: string | undefined;
  headers: Record<string, string>;
}

export function signedRequest(k: ApiKey, method: 'GET' | 'POST', path: string, body = ''): SignedRequest {
  const ts = String(Math.floor(Date.now() / 1000));
  const nonce = randomUUID();
  return {
    method,
    path,
    body: method === 'GET' ? undefined : body,
    headers: {
      authorization: `Bearer ${k.key}`,
      'content-type': 'application/json',
      'x-service-timestamp': ts,
      'x-service-nonce': nonce,
      'x-service-signature': createHmac('sha256', k.secret).update(`${ts}.${nonce}.${body}`).digest('hex'),
    },
  };
}
