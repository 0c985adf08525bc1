import { randomUUID } from 'node:crypto';
import { sign } from '../../test/support/signed-client.js';

// The merchant's side of the API during a seed: signed requests (interface.md, Authentication) that a merchant's
// integration would retry while the service is down or restarting. A retry of a create or a cancel sends the same
// Idempotency-Key, so a lost answer never creates a second object, and a cancel whose answer was lost (the API killed
// after its commit) is answered again rather than refused as already canceled (seed 65).

export interface ApiAnswer {
  status: number;
  json: any;
}

export interface MerchantApi {
  call(method: 'GET' | 'POST', path: string, body?: unknown, o?: { idempotencyKey?: string; untilMs?: number }): Promise<ApiAnswer>;
}

export function merchantApi(baseUrl: string, key: string, secret: string, stopped: () => boolean): MerchantApi {
  return {
    async call(method, path, body, o = {}) {
      const deadline = Date.now() + (o.untilMs ?? 60_000);
      for (;;) {
        const text = method === 'GET' ? '' : JSON.stringify(body ?? {});
        const ts = String(Math.floor(Date.now() / 1000));
        const nonce = randomUUID();
        const headers: Record<string, string> = {
          authorization: `Bearer ${key}`,
          'x-service-timestamp': ts,
          'x-service-nonce': nonce,
          'x-service-signature': sign(secret, ts, nonce, text),
        };
        if (method === 'POST') headers['content-type'] = 'application/json';
        if (o.idempotencyKey) headers['idempotency-key'] = o.idempotencyKey;
        try {
          const res = await fetch(baseUrl + path, {
            method,
            headers,
            body: method === 'GET' ? undefined : text,
            signal: AbortSignal.timeout(10_000),
          });
          const raw = await res.text();
          // 5xx while a dependency is down (503) is what a merchant retries; anything else is the answer.
          if (res.status < 500 || Date.now() > deadline || stopped())
            return { status: res.status, json: raw ? JSON.parse(raw) : undefined };
        } catch (err) {
          if (Date.now() > deadline || stopped()) throw err;
        }
        await new Promise((r) => setTimeout(r, 300));
      }
    },
  };
}

/** The public checkout selection (no auth): POST /checkout/sessions/{id}/select, retried like the page would. */
export async function selectNetwork(
  baseUrl: string,
  sessionId: string,
  network: string,
  token: string,
  untilMs = 60_000,
): Promise<{ status: number; json: any }> {
  const deadline = Date.now() + untilMs;
  for (;;) {
    try {
      const res = await fetch(`${baseUrl}/checkout/sessions/${sessionId}/select`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ network, token }),
        signal: AbortSignal.timeout(10_000),
      });
      const json = await res.json().catch(() => undefined);
      if (res.status < 500 || Date.now() > deadline) return { status: res.status, json };
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    await new Promise((r) => setTimeout(r, 300));
  }
}
