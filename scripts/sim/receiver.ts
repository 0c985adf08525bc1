import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { verifyRequest } from '../../test/support/webhook-receiver.js';
import type { ReceivedDelivery } from './contract.js';
import type { Prng } from './prng.js';

// The merchant's webhook endpoint during a seed: a real HTTP server that records every delivery (ReceivedDelivery of
// contract.ts) and answers what the seed's PRNG says: 2xx, 4xx, 5xx, an answer slower than the service's timeout, a
// hang, or a reset socket. `heal()` (the drain phase) makes it answer 200 to everything from then on. Every request
// is checked against the spec's signature algorithm with the merchant's secret; a request that fails is a problem.

export type ReceiverMode = 'ok' | 'flaky';

export interface SimReceiver {
  url: string;
  deliveries: ReceivedDelivery[];
  /** Requests whose headers or signature were wrong (each names the problem). */
  problems: string[];
  answers: Record<string, number>;
  /** The webhook secret of each merchant the receiver serves. */
  addSecret(secret: string): void;
  heal(): void;
  close(): Promise<void>;
}

export async function startSimReceiver(prng: Prng, timeoutMs: number): Promise<SimReceiver> {
  const deliveries: ReceivedDelivery[] = [];
  const problems: string[] = [];
  const answers: Record<string, number> = {};
  const state = { healed: false, secrets: [] as string[], seq: 0 };
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();
  const count = (k: string) => (answers[k] = (answers[k] ?? 0) + 1);

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const v = verifyRequest(req.headers, body, state.secrets);
      if (v.problems.length > 0) problems.push(`${v.eventId ?? '?'}: ${v.problems.join('; ')}`);
      let objectId = '';
      try {
        const parsed = JSON.parse(body) as { data?: { object?: { id?: unknown } } };
        objectId = typeof parsed.data?.object?.id === 'string' ? parsed.data.object.id : '';
      } catch {
        /* recorded as a problem above */
      }
      const r = state.healed ? 1 : prng.next();
      const rec: ReceivedDelivery = { eventId: v.eventId ?? '', type: v.eventType ?? '', objectId, body, answered: 0, seq: state.seq++ };
      deliveries.push(rec);
      const send = (status: number) => {
        rec.answered = status;
        count(String(status));
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(status < 300 ? '{"received":true}' : '{"error":"sim"}');
      };
      if (r < 0.55 || state.healed) return send(prng.chance(0.2) ? 204 : 200);
      if (r < 0.65) return send(prng.pick([400, 404, 410, 422]));
      if (r < 0.8) return send(prng.pick([500, 502, 503]));
      if (r < 0.87) {
        // Slower than the service waits: it gives up first (counts as a failed attempt), the late 200 lands nowhere.
        count('slow');
        setTimeout(() => {
          if (!res.destroyed) send(200);
        }, timeoutMs + 200).unref();
        return;
      }
      if (r < 0.94) {
        count('hang');
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      count('reset');
      req.socket.destroy();
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
    deliveries,
    problems,
    answers,
    addSecret: (s) => {
      state.secrets.push(s);
    },
    heal: () => {
      state.healed = true;
      for (const h of hanging) h.destroy();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
