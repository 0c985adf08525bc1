import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { warmUpOpenApiCheck, webhookProblems } from './openapi-check.js';

// A merchant's webhook endpoint on 127.0.0.1. It verifies every request with its own implementation of the spec's
// algorithm (interface.md, Events): `X-Service-Signature` must be exactly one hex HMAC-SHA256(secret,
// `${timestamp}.${nonce}.${raw body}`) made with one secret it knows (each merchant it serves has one). Only when told
// to (`acceptPrevious`, a receiver built for seamless rotation) does it also accept `X-Service-Signature-Previous`.
// It checks every header and, against the OpenAPI document, the body; and records what it saw.
// Answers come from a script: a status, a hang (never answers), or a socket reset.

export type Answer = number | 'hang' | 'reset' | { status: number; delayMs: number };

export interface ReceivedRequest {
  eventId: string | undefined;
  eventType: string | undefined;
  body: string;
  headers: IncomingMessage['headers'];
  /** Header problems found; empty when the request is fully valid. */
  problems: string[];
  /** Which of the receiver's secrets matched (index), or -1. */
  matchedSecret: number;
  /** The header whose signature matched, or null. */
  matchedHeader: SignatureHeader | null;
  path: string;
  at: number;
  answeredWith: Answer;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  received: ReceivedRequest[];
  /** Secrets the receiver accepts. */
  secrets: string[];
  /** Also accept a signature in `X-Service-Signature-Previous` (default false: a receiver built to the spec). */
  acceptPrevious: boolean;
  /** Decides each answer; default 200. `n` counts requests for this event id, from 1. */
  answer: (r: ReceivedRequest, n: number) => Answer;
  forEvent(id: string): ReceivedRequest[];
  /** Requests answered 'hang' whose connection is still open. */
  readonly hanging: number;
  /** Answers every hanging request with `status` now. */
  releaseHanging(status: number): void;
  waitFor(pred: () => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export type SignatureHeader = 'x-service-signature' | 'x-service-signature-previous';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function hmacHex(secret: string, message: string): Buffer {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(message, 'utf8')).digest();
}

export function verifyRequest(
  headers: IncomingMessage['headers'],
  rawBody: string,
  secrets: readonly string[],
  nowSeconds = Math.floor(Date.now() / 1000),
  opts: { acceptPrevious?: boolean } = {},
): { problems: string[]; matchedSecret: number; matchedHeader: SignatureHeader | null; eventId?: string; eventType?: string } {
  const problems: string[] = [];
  const h = (n: string) => (Array.isArray(headers[n]) ? undefined : (headers[n] as string | undefined));
  if (h('content-type') !== 'application/json') problems.push(`content-type: ${h('content-type')}`);
  if (h('user-agent') !== 'Service-Webhook/1.0') problems.push(`user-agent: ${h('user-agent')}`);
  const ts = h('x-service-timestamp') ?? '';
  if (!/^\d{10}$/.test(ts)) problems.push(`timestamp format: ${ts}`);
  else if (Math.abs(nowSeconds - Number(ts)) > 300) problems.push('timestamp stale');
  const nonce = h('x-service-nonce') ?? '';
  if (!UUID_V4.test(nonce)) problems.push(`nonce not uuid v4: ${nonce}`);
  let body: { id?: unknown; type?: unknown; created_at?: unknown; data?: { object?: unknown } } = {};
  try {
    body = JSON.parse(rawBody) as typeof body;
  } catch {
    problems.push('body is not JSON');
  }
  if (typeof body.id !== 'string' || !/^evt_\d+$/.test(body.id)) problems.push('body id');
  if (h('x-service-event-id') !== body.id) problems.push('event id header differs from body id');
  if (h('x-service-event-type') !== body.type) problems.push('event type header differs from body type');
  if (typeof body.created_at !== 'number') problems.push('created_at');
  if (typeof body.data?.object !== 'object' || body.data.object === null) problems.push('data.object');
  const headersToTry: SignatureHeader[] = opts.acceptPrevious
    ? ['x-service-signature', 'x-service-signature-previous']
    : ['x-service-signature'];
  const spec = h('x-service-signature') ?? '';
  if (!/^[0-9a-f]{64}$/.test(spec)) problems.push(`signature header is not one hex HMAC: ${spec}`);
  const previous = h('x-service-signature-previous');
  if (previous !== undefined && !/^[0-9a-f]{64}$/.test(previous))
    problems.push(`previous signature header is not one hex HMAC: ${previous}`);
  let matched = -1;
  let matchedHeader: SignatureHeader | null = null;
  for (const [i, secret] of secrets.entries()) {
    const expected = hmacHex(secret, `${ts}.${nonce}.${rawBody}`);
    for (const name of headersToTry) {
      const g = h(name);
      if (g === undefined || !/^[0-9a-f]{64}$/.test(g) || matched !== -1) continue;
      if (timingSafeEqual(expected, Buffer.from(g, 'hex'))) [matched, matchedHeader] = [i, name];
    }
  }
  if (matched === -1) problems.push('signature');
  return {
    problems,
    matchedSecret: matched,
    matchedHeader,
    ...(typeof body.id === 'string' ? { eventId: body.id } : {}),
    ...(typeof body.type === 'string' ? { eventType: body.type } : {}),
  };
}

export async function startWebhookReceiver(secrets: string[] = []): Promise<WebhookReceiver> {
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();
  const received: ReceivedRequest[] = [];
  warmUpOpenApiCheck();
  const counts = new Map<string, number>();
  const state: Pick<WebhookReceiver, 'answer' | 'secrets' | 'acceptPrevious'> = { answer: () => 200, secrets, acceptPrevious: false };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const v = verifyRequest(req.headers, body, state.secrets, undefined, { acceptPrevious: state.acceptPrevious });
      // The body must also be what the OpenAPI document's `webhooks` section says for its type (docs/openapi.md).
      if (v.problems.length === 0) v.problems.push(...webhookProblems(JSON.parse(body)));
      const rec: ReceivedRequest = {
        eventId: v.eventId,
        eventType: v.eventType,
        body,
        headers: req.headers,
        problems: v.problems,
        matchedSecret: v.matchedSecret,
        matchedHeader: v.matchedHeader,
        path: req.url ?? '',
        at: Date.now(),
        answeredWith: 200,
      };
      const n = (counts.get(v.eventId ?? '') ?? 0) + 1;
      counts.set(v.eventId ?? '', n);
      const a = state.answer(rec, n);
      rec.answeredWith = a;
      received.push(rec);
      if (a === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      if (a === 'reset') {
        req.socket.destroy();
        return;
      }
      const send = (status: number) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(status < 300 ? '{"received":true}' : `{"error":"status ${status}"}`);
      };
      if (typeof a === 'number') send(a);
      else setTimeout(() => send(a.status), a.delayMs);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received,
    get secrets() {
      return state.secrets;
    },
    set secrets(s: string[]) {
      state.secrets = s;
    },
    get acceptPrevious() {
      return state.acceptPrevious;
    },
    set acceptPrevious(v: boolean) {
      state.acceptPrevious = v;
    },
    get answer() {
      return state.answer;
    },
    set answer(f) {
      state.answer = f;
    },
    forEvent: (id) => received.filter((r) => r.eventId === id),
    get hanging() {
      return hanging.size;
    },
    releaseHanging(status) {
      for (const res of [...hanging]) {
        hanging.delete(res);
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(status < 300 ? '{"received":true}' : `{"error":"status ${status}"}`);
      }
    },
    async waitFor(pred, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pred()) {
        if (Date.now() > deadline) throw new Error('receiver: condition not met in time');
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
