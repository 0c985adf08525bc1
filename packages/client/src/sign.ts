import { createHmac, randomUUID } from 'node:crypto';

// Request signing (the API's security schemes): hex HMAC-SHA256(secret, `<timestamp>.<nonce>.<raw body>`), sent with
// the key as a bearer token. A fresh nonce and timestamp for every attempt: the server refuses a reused nonce.

export function signature(secret: string, timestamp: string, nonce: string, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${nonce}.`, 'utf8').update(body, 'utf8').digest('hex');
}

export function signedHeaders(apiKey: string, apiSecret: string, body: string, nowSeconds = Math.floor(Date.now() / 1000)): Record<string, string> {
  const timestamp = String(nowSeconds);
  const nonce = randomUUID();
  return {
    authorization: `Bearer ${apiKey}`,
    'x-service-timestamp': timestamp,
    'x-service-nonce': nonce,
    'x-service-signature': signature(apiSecret, timestamp, nonce, body),
  };
}
