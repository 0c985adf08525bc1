import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Json } from '../../api/openapi/schema-helpers.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from '../route.js';
import { buildConsoleOpenApiDocument } from './document.js';
import type { RouteDoc } from './route-doc.js';

// GET <console API prefix>/openapi.json: the console API's document, to signed-in console users only (any role), like
// every other console route: the console is meant to stay off the public internet, and its API surface is no one
// else's business (docs/openapi.md). Built at the first request from the routes this instance registered, then kept.

const documentSchema = z.looseObject({
  openapi: z.literal('3.1.0'),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.unknown()),
});

export function registerConsoleOpenApiRoute(api: FastifyInstance, deps: ConsoleDeps, docs: readonly RouteDoc[]): void {
  const built: { doc?: Json } = {};
  consoleRoute(api, deps.ops.db, {
    method: 'GET',
    url: '/openapi.json',
    summary: "This document: the console API's OpenAPI 3.1 description",
    response: documentSchema,
    handler: async () => {
      built.doc ??= buildConsoleOpenApiDocument(docs, { server: api.prefix });
      return built.doc as z.output<typeof documentSchema>;
    },
  });
}
