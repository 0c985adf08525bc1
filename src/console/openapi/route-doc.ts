import type { z } from 'zod';
import type { ErrorCodesByStatus } from '../../api/openapi/error-catalog.js';
import type { Json } from '../../api/openapi/schema-helpers.js';

// What the console's OpenAPI document (docs/openapi.md, "The console's document") says of one route, carried by the
// route itself: consoleRoute puts its spec in the Fastify route's config under ROUTE_DOC, and a route registered
// without consoleRoute (the sign-in, the live stream) passes routeDoc(...) as its config. The document is built from
// the routes a console API instance registered (collect.ts), so a route and its entry cannot drift apart.

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** A success body that is not JSON (an export's file, the live stream): its media types, as in OpenAPI. */
export interface MediaResponse {
  description: string;
  content: Record<string, { schema: Json }>;
}

export interface RouteDoc {
  method: Method;
  /** Below the console API's prefix, e.g. `/payments/:id`. */
  url: string;
  /** One line for the document (OpenAPI `summary`). */
  summary: string;
  /** 'operator': operators only (403 for merchant users). Default: any signed-in user, scoped by the handler. */
  role?: 'operator' | 'any';
  /** 'none': answers without a session (the sign-in). Default: a signed-in console session. */
  auth?: 'session' | 'none';
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  /** The success body: a zod schema of the JSON answered, or the media types of a file or a stream. */
  response: z.ZodType | MediaResponse;
  /** The success statuses, default [200] (e.g. [201] for a create, [201, 200] for a create that may replay). */
  status?: readonly number[];
  /** The route's own error codes by status, besides the ones every console route can answer (errors.ts). */
  errors?: ErrorCodesByStatus;
}

export const ROUTE_DOC = 'consoleRouteDoc';

/** The Fastify route config carrying a route's document entry. */
export const routeDoc = (doc: RouteDoc): { [ROUTE_DOC]: RouteDoc } => ({ [ROUTE_DOC]: doc });

export const isMediaResponse = (r: RouteDoc['response']): r is MediaResponse =>
  typeof (r as MediaResponse).description === 'string' && typeof (r as MediaResponse).content === 'object';
