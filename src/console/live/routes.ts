import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError, parameterInvalid } from '../../domain/errors.js';
import { sessionMerchant } from '../../ledger/payments/session-fingerprint.js';
import type { ConsoleDeps } from '../deps.js';
import { assertOwns, forbidden } from '../actor.js';
import { ConsoleLiveHub } from './hub.js';
import { routeDoc } from '../openapi/route-doc.js';
import { parseTopics } from './topics.js';

// GET /api/live?topics=payments,payment:cs_... : a Server-Sent Events stream of `event: change` with data
// {"topic": "..."} whenever a subscribed view changed. One per open page; all of a process's streams share one reader
// (hub.ts). Operators only for sweep topics; a merchant user only for its own sessions.

const HEARTBEAT_MS = 15_000;

/** For the document only: the route reads `topics` itself (parseTopics), refusing what this pattern lets through. */
const liveQuery = z.object({
  topics: z.string().min(1).meta({
    description: 'Comma-separated, 1 to 10 of overview, payments, refunds, subscriptions, webhooks, sweeps, payment:<id>, sweep:<id>.',
  }),
});

export async function registerLiveRoute(app: FastifyInstance, deps: ConsoleDeps): Promise<ConsoleLiveHub> {
  const hub = new ConsoleLiveHub({
    db: deps.ops.db,
    intervalMs: deps.settings.liveIntervalMs,
    maxStreams: 2000,
    maxPerUser: 20,
    log: deps.ops.log,
  });
  app.addHook('onClose', async () => hub.stop());
  // A stream lasts until its page closes: end them when the listener closes (the browser reconnects elsewhere), or the
  // close would wait for them until its grace period is over (api/in-flight.ts).
  const streams = new Set<ServerResponse>();
  app.addHook('preClose', async () => {
    for (const res of streams) res.end();
    streams.clear();
  });
  const doc = routeDoc({
    method: 'GET',
    url: '/live',
    summary: 'A live stream of changes to the views named in topics (Server-Sent Events)',
    query: liveQuery,
    response: {
      description:
        'A text/event-stream: first `event: ready` with data {"topics": [...]}, then `event: change` with data {"topic": "..."} whenever a subscribed view changed, and a comment line every 15 s.',
      content: { 'text/event-stream': { schema: { type: 'string' } } },
    },
    errors: { 429: ['too_many_streams'] },
  });
  app.get('/live', { config: doc }, async (req, reply) => {
    const actor = req.consoleActor;
    if (!actor) throw new ApiError(401, 'authentication_error', 'not_signed_in', 'Sign in to the console first.');
    const raw = (req.query as Record<string, unknown>).topics;
    const topics = typeof raw === 'string' ? parseTopics(raw) : undefined;
    if (!topics)
      throw parameterInvalid(
        'topics',
        'topics: 1 to 10 of overview, payments, refunds, subscriptions, webhooks, sweeps, payment:<id>, sweep:<id>.',
      );
    for (const t of topics) {
      if ((t === 'sweeps' || t.startsWith('sweep:')) && actor.role !== 'operator') throw forbidden();
      if (t.startsWith('payment:')) {
        const merchant = await sessionMerchant(deps.ops.db, t.slice(8));
        if (merchant === undefined) throw new ApiError(404, 'invalid_request_error', 'resource_not_found', 'No such session.', 'topics');
        assertOwns(actor, merchant);
      }
    }
    let heartbeat: NodeJS.Timeout | undefined;
    const joined = await hub.join({
      actor,
      topics: new Set(topics),
      send: (topic) => reply.raw.write(`event: change\ndata: ${JSON.stringify({ topic })}\n\n`),
    });
    if ('full' in joined) {
      throw new ApiError(429, 'rate_limit_error', 'too_many_streams', 'Too many live views are open; close some pages.');
    }
    reply.hijack();
    reply.raw.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
      'X-Content-Type-Options': 'nosniff',
    });
    reply.raw.write(`retry: 3000\nevent: ready\ndata: ${JSON.stringify({ topics })}\n\n`);
    heartbeat = setInterval(() => reply.raw.write(': keep-alive\n\n'), HEARTBEAT_MS);
    streams.add(reply.raw);
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      clearInterval(heartbeat);
      streams.delete(reply.raw);
      joined.leave();
    };
    req.raw.on('close', leave);
    reply.raw.on('close', leave);
  });
  return hub;
}
