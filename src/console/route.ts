import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { ApiError, invalidRequest } from '../domain/errors.js';
import type { Database } from '../db/schema.js';
import { appendAudit, type AuditEntry } from '../ledger/audit/audit-log.js';
import { type ConsoleActor, auditActorOf, forbidden } from './actor.js';
import { type MediaResponse, type RouteDoc, routeDoc } from './openapi/route-doc.js';

// One console API route: typed input (zod), who may call it, CSRF on every mutation, and the audit row of every
// mutation. Handlers call one application function (src/operations/) and shape its answer; no business rule here.

export type { Method } from './openapi/route-doc.js';

export interface RouteContext<P, Q, B> {
  actor: ConsoleActor;
  params: P;
  query: Q;
  body: B;
  req: FastifyRequest;
  reply: FastifyReply;
  /** Records the mutation's audit row (who, role, IP and time are added). A mutation must call it at least once. */
  audit(entry: AuditEntry): Promise<void>;
}

/** A value whose JSON encoding has the shape T: a Date where T has any string (JSON.stringify writes its ISO form). */
export type Encodes<T> = T extends string
  ? string extends T
    ? T | Date
    : T
  : T extends readonly (infer U)[]
    ? Encodes<U>[]
    : T extends object
      ? { [K in keyof T]: Encodes<T[K]> }
      : T;

/** What a handler returns: a value encoding as the declared response (a file or stream route returns the reply). */
export type ResponseOf<R> = R extends z.ZodType ? Encodes<z.output<R>> : unknown;

/** One route: its document entry (route-doc.ts: method, url, role, input and response schemas, errors) and handler. */
export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType | MediaResponse>
  extends RouteDoc {
  params?: P;
  query?: Q;
  body?: B;
  response: R;
  handler(ctx: RouteContext<z.output<P>, z.output<Q>, z.output<B>>): Promise<ResponseOf<R>>;
}

const EMPTY = z.strictObject({});

/** Registers a route on the console API scope (signed-in users only: the session hook ran before). */
export function consoleRoute<
  R extends z.ZodType | MediaResponse,
  P extends z.ZodType = typeof EMPTY,
  Q extends z.ZodType = typeof EMPTY,
  B extends z.ZodType = typeof EMPTY,
>(app: FastifyInstance, db: Kysely<Database>, spec: RouteSpec<P, Q, B, R>): void {
  const mutation = spec.method !== 'GET';
  const { handler: _handler, ...doc } = spec;
  app.route({
    method: spec.method,
    url: spec.url,
    config: routeDoc(doc),
    handler: async (req, reply) => {
      const actor = req.consoleActor;
      if (!actor) throw new ApiError(401, 'authentication_error', 'not_signed_in', 'Sign in to the console first.');
      if (spec.role === 'operator' && actor.role !== 'operator') throw forbidden();
      if (mutation) checkCsrf(req, actor);
      const params = parse(spec.params ?? EMPTY, req.params ?? {}, 'path');
      const query = parse(spec.query ?? EMPTY, req.query ?? {}, 'query');
      const body = parse(spec.body ?? EMPTY, req.body ?? {}, 'body');
      let audited = 0;
      const audit = async (entry: AuditEntry) => {
        audited += 1;
        await appendAudit(db, auditActorOf(actor), entry);
      };
      const out = await spec.handler({ actor, params, query, body, req, reply, audit } as RouteContext<
        z.output<P>,
        z.output<Q>,
        z.output<B>
      >);
      if (mutation && audited === 0 && reply.statusCode < 400) {
        req.log.error({ url: spec.url }, 'console mutation left no audit row');
      }
      return out;
    },
  });
}

/** The session's CSRF token must come back in X-CSRF-Token on every mutation (SameSite=Strict is the second wall). */
export function checkCsrf(req: FastifyRequest, actor: ConsoleActor): void {
  const sent = req.headers['x-csrf-token'];
  if (typeof sent !== 'string' || !timingSafeEqualText(sent, actor.csrfToken)) {
    throw new ApiError(403, 'permission_error', 'csrf_token_invalid', "The request lacks this session's CSRF token (X-CSRF-Token).");
  }
}

function timingSafeEqualText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** Zod's first issue as the spec's error: `parameter_unknown` or `parameter_invalid`, with the parameter named. */
export function parse<T extends z.ZodType>(schema: T, value: unknown, where: string): z.output<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  if (issue?.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    throw invalidRequest('parameter_unknown', `Received unknown parameter: ${key}.`, key);
  }
  const param = (issue?.path ?? []).map(String).join('.') || where;
  throw invalidRequest('parameter_invalid', `Invalid ${param}: ${issue?.message ?? 'not accepted'}.`, param);
}
