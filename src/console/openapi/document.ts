import { z } from 'zod';
import { errorBodySchema } from '../../api/errors.js';
import {
  componentSchemas,
  errorResponses,
  type Json,
  jsonContent,
  objectParameters,
  ref,
  REQUEST_ID,
} from '../../api/openapi/schema-helpers.js';
import { SESSION_COOKIE } from '../auth/cookie.js';
import { consoleErrorCodes } from './error-codes.js';
import { isMediaResponse, type RouteDoc } from './route-doc.js';

// The console API's own OpenAPI 3.1 document (docs/openapi.md, "The console's document"), generated from the document
// entries its routes carry (route-doc.ts): the same zod schemas the routes parse their input with and declare their
// answers with. A document of its own, not a tag of the public one: another audience, another authentication (the
// console session cookie and a CSRF token, never an API key), another server (the console's listener or path).

/** The console API's prefix below the console's base (its own listener: /api; with CONSOLE_PATH: <path>/api). */
export const CONSOLE_API_PREFIX = '/api';

const words = (url: string) =>
  url
    .split(/[/_:-]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1));

/** `POST /payments/:id/refund` → `postPaymentsIdRefund`. */
export const operationIdOf = (doc: RouteDoc): string => `${doc.method.toLowerCase()}${words(doc.url).join('')}`;

/** The OpenAPI path of a Fastify URL: `/payments/:id` → `/payments/{id}`. */
export const openApiPath = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** The tag of a route: its first path segment (`/payments/:id/refund` → Payments). */
const tagOf = (doc: RouteDoc): string => {
  const first = doc.url.split('/')[1] ?? '';
  return first === 'openapi.json' ? 'Document' : (words(first)[0] ?? 'Console');
};

const shapeOf = (schema: z.ZodType | undefined): Record<string, unknown> | undefined =>
  schema instanceof z.ZodObject ? (schema.shape as Record<string, unknown>) : undefined;

function operation(doc: RouteDoc, names: Map<z.ZodType, string>): Json {
  const id = operationIdOf(doc);
  const session = doc.auth !== 'none';
  const mutation = doc.method !== 'GET';
  const parameters = [...objectParameters(shapeOf(doc.params), 'path'), ...objectParameters(shapeOf(doc.query), 'query')];
  const success: Json = {};
  for (const status of doc.status ?? [200]) {
    success[String(status)] = isMediaResponse(doc.response)
      ? { description: doc.response.description, headers: REQUEST_ID, content: doc.response.content }
      : { description: 'Success.', headers: REQUEST_ID, content: jsonContent(ref(names.get(doc.response)!)) };
  }
  const who = !session
    ? 'No session needed.'
    : doc.role === 'operator'
      ? 'Operators only.'
      : 'Any signed-in user (a merchant user sees its own merchant only).';
  return {
    operationId: id,
    tags: [tagOf(doc)],
    summary: doc.summary,
    description: `${who}${mutation && session ? ' A mutation: send the X-CSRF-Token header; it is audited.' : ''}`,
    security: !session ? [] : mutation ? [{ SessionCookie: [], CsrfToken: [] }] : [{ SessionCookie: [] }],
    ...(parameters.length ? { parameters } : {}),
    ...(doc.body ? { requestBody: { required: !doc.body.safeParse({}).success, content: jsonContent(ref(names.get(doc.body)!)) } } : {}),
    responses: { ...success, ...errorResponses(consoleErrorCodes(doc)) },
  };
}

const pascal = (id: string) => id[0]!.toUpperCase() + id.slice(1);

export interface ConsoleDocumentOptions {
  /** The API's URL prefix, as served (default CONSOLE_API_PREFIX). */
  server?: string;
}

/** The document of the given routes (collect.ts gathers them from a console API instance). */
export function buildConsoleOpenApiDocument(routes: readonly RouteDoc[], o: ConsoleDocumentOptions = {}): Json {
  // Each distinct schema once in components.schemas, named after the first route that uses it.
  const responses = new Map<z.ZodType, string>();
  const bodies = new Map<z.ZodType, string>();
  for (const r of routes) {
    if (!isMediaResponse(r.response) && !responses.has(r.response)) responses.set(r.response, `${pascal(operationIdOf(r))}Response`);
    if (r.body && !bodies.has(r.body)) bodies.set(r.body, `${pascal(operationIdOf(r))}Request`);
  }
  const names = new Map([...responses, ...bodies]);
  const paths: Record<string, Json> = {};
  for (const r of routes) {
    const path = openApiPath(r.url);
    if (paths[path]?.[r.method.toLowerCase()]) throw new Error(`console API: ${r.method} ${r.url} twice`);
    paths[path] = { ...paths[path], [r.method.toLowerCase()]: operation(r, names) };
  }
  const tags = [...new Set(routes.map(tagOf))].map((name) => ({ name }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Stablepay console API',
      version: '1',
      summary: "The web console's own API: for its single-page app and the operator's scripts, never for merchants' servers.",
      description:
        'Authenticated by the console session only (never by a merchant API key): sign in with POST /auth/login, which sets the session cookie and answers the session\'s CSRF token; send that token in `X-CSRF-Token` on every mutation (POST, PUT, DELETE). Operators must have TOTP on before any route outside /auth/ answers. Every mutation is audited. Every error has the `Error` shape (docs/errors.md, "The console\'s API"). Money: decimal strings.',
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    servers: [
      {
        url: o.server ?? CONSOLE_API_PREFIX,
        description: "The console's API: below the console's own listener, or below CONSOLE_PATH on the public listener.",
      },
    ],
    tags,
    paths,
    components: {
      schemas: {
        ...componentSchemas({ ...Object.fromEntries([...responses].map(([s, n]) => [n, s])), Error: errorBodySchema }, 'output'),
        ...componentSchemas(Object.fromEntries([...bodies].map(([s, n]) => [n, s])), 'input'),
      },
      securitySchemes: {
        SessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: SESSION_COOKIE,
          description: 'The console session (HttpOnly, SameSite=Strict), set by POST /auth/login.',
        },
        CsrfToken: {
          type: 'apiKey',
          in: 'header',
          name: 'X-CSRF-Token',
          description: "The session's CSRF token (csrf_token of the sign-in and of GET /auth/me), on every mutation.",
        },
      },
      headers: {
        RequestId: { description: 'The request id (also in error bodies and logs).', schema: { type: 'string' } },
        RetryAfter: { description: 'Seconds to wait before retrying.', schema: { type: 'string' } },
      },
    },
  };
}
