import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { idField } from '../log-fields.js';

// Fastify's own request lines ("incoming request", "request completed", errors) carry the business ids of the route
// (docs/operations.md, "Logs"): one grep for a session, refund or subscription id finds its requests too. The route
// parameters are known when the request is created, before its first line; every later line of the request (the
// handler's, "request refused") goes through the same child logger.

/** Route parameters named as the API names them: logged under the same field. */
const NAMED = ['session_id', 'refund_id', 'subscription_id', 'invoice_id', 'payment_id', 'payment_method_id'] as const;

/** The log fields of a request's route parameters; `:id` (the hosted pages) by its prefix (`cs_` → session_id). */
export function businessIds(params: unknown): Record<string, string> | null {
  if (!params || typeof params !== 'object') return null;
  const p = params as Record<string, unknown>;
  const out: Record<string, string> = {};
  for (const name of NAMED) if (typeof p[name] === 'string' && p[name] !== '') out[name] = p[name];
  if (typeof p.id === 'string' && p.id !== '') Object.assign(out, idField(p.id));
  return Object.keys(out).length > 0 ? out : null;
}

export class BusinessIdLogController extends LogController {
  override incomingRequest(request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    const ids = businessIds(request.params);
    if (ids) {
      const child = request.log.child(ids);
      request.log = child;
      reply.log = child;
    }
    super.incomingRequest(request, reply, metadata);
  }
}
