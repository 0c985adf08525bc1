import { createHmac, randomUUID } from 'node:crypto';

// Signature (interface.md, Events): hex(HMAC-SHA256(secret, `${timestamp}.${nonce}.${rawBody}`)), fresh timestamp
// and UUID v4 nonce per attempt. `X-Service-Signature` always carries exactly one hex HMAC, made with the newest
// secret, so a receiver built to the spec verifies every delivery. While a rotation overlaps, the previous secret's
// HMAC over the same timestamp, nonce and body travels in `X-Service-Signature-Previous` (our extension header).

export const USER_AGENT = 'Service-Webhook/1.0';

export function signWebhook(secret: string, timestamp: string, nonce: string, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${nonce}.${rawBody}`, 'utf8').digest('hex');
}

export interface SignedHeaders {
  'Content-Type': 'application/json';
  'X-Service-Signature': string;
  /** Present only while a rotated-out secret still signs. */
  'X-Service-Signature-Previous'?: string;
  'X-Service-Timestamp': string;
  'X-Service-Nonce': string;
  'X-Service-Event-Type': string;
  'X-Service-Event-ID': string;
  'User-Agent': string;
}

export const PREVIOUS_SIGNATURE_HEADER = 'X-Service-Signature-Previous';

export function buildDeliveryHeaders(input: {
  /** The secrets that sign now, newest first: the current one, then the previous one during an overlap. */
  secrets: readonly string[];
  eventId: string;
  eventType: string;
  rawBody: string;
  now?: Date;
  nonce?: string;
}): SignedHeaders {
  if (input.secrets.length === 0) throw new Error('no signing secret');
  if (input.secrets.length > 2) throw new Error('at most the current and the previous secret sign');
  const timestamp = String(Math.floor((input.now ?? new Date()).getTime() / 1000));
  const nonce = input.nonce ?? randomUUID();
  const [current, previous] = input.secrets;
  return {
    'Content-Type': 'application/json',
    'X-Service-Signature': signWebhook(current!, timestamp, nonce, input.rawBody),
    ...(previous !== undefined ? { [PREVIOUS_SIGNATURE_HEADER]: signWebhook(previous, timestamp, nonce, input.rawBody) } : {}),
    'X-Service-Timestamp': timestamp,
    'X-Service-Nonce': nonce,
    'X-Service-Event-Type': input.eventType,
    'X-Service-Event-ID': input.eventId,
    'User-Agent': USER_AGENT,
  };
}
