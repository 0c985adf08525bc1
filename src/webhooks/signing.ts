import { createHmac, randomUUID } from 'node:crypto';

// Signature (interface.md, Events): hex(HMAC-SHA256(secret, `${timestamp}.${nonce}.${rawBody}`)), fresh timestamp
// and UUID v4 nonce per attempt. During a secret rotation both secrets sign: the header then carries the
// signatures comma-separated, newest first, and a receiver accepts the request when any one of them matches.

export const USER_AGENT = 'Service-Webhook/1.0';

export function signWebhook(secret: string, timestamp: string, nonce: string, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${nonce}.${rawBody}`, 'utf8').digest('hex');
}

export interface SignedHeaders {
  'Content-Type': 'application/json';
  'X-Service-Signature': string;
  'X-Service-Timestamp': string;
  'X-Service-Nonce': string;
  'X-Service-Event-Type': string;
  'X-Service-Event-ID': string;
  'User-Agent': string;
}

export function buildDeliveryHeaders(input: {
  secrets: readonly string[];
  eventId: string;
  eventType: string;
  rawBody: string;
  now?: Date;
  nonce?: string;
}): SignedHeaders {
  if (input.secrets.length === 0) throw new Error('no signing secret');
  const timestamp = String(Math.floor((input.now ?? new Date()).getTime() / 1000));
  const nonce = input.nonce ?? randomUUID();
  return {
    'Content-Type': 'application/json',
    'X-Service-Signature': input.secrets.map((s) => signWebhook(s, timestamp, nonce, input.rawBody)).join(','),
    'X-Service-Timestamp': timestamp,
    'X-Service-Nonce': nonce,
    'X-Service-Event-Type': input.eventType,
    'X-Service-Event-ID': input.eventId,
    'User-Agent': USER_AGENT,
  };
}
