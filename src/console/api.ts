import type { FastifyInstance } from 'fastify';
import { sendError } from '../api/errors.js';
import { invalidRequest } from '../domain/errors.js';
import { registerConsoleAuth } from './auth/index.js';
import type { ConsoleDeps } from './deps.js';
import { registerLiveRoute } from './live/routes.js';
import { collectRouteDocs } from './openapi/collect.js';
import { registerConsoleOpenApiRoute } from './openapi/serve.js';
import { registerConsoleResources } from './routes/index.js';

// The console's typed API, on the scope of its prefix (<base>/api): JSON bodies only, no caching, the spec's error
// shape for an unknown URL, the sign-in and every resource, the live stream and the API's own OpenAPI document
// (GET /openapi.json, built from the document entries the routes registered here carry).

export async function registerConsoleApi(api: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const docs = collectRouteDocs(api);
  api.removeAllContentTypeParsers();
  api.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: 65_536 }, (_req, body, done) => {
    if (body === '') return done(null, {});
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(invalidRequest('INVALID_JSON', 'The request body could not be read as JSON.'), undefined);
    }
  });
  api.addHook('onSend', async (_req, reply) => {
    reply.header('Cache-Control', 'no-store');
  });
  api.setNotFoundHandler((req, reply) =>
    sendError(
      req,
      reply,
      invalidRequest('resource_not_found', `Unrecognized console URL (${req.method} ${req.url.split('?')[0]}).`, undefined, 404),
      deps.docsUrl,
    ),
  );
  await registerConsoleAuth(api, deps);
  await registerConsoleResources(api, deps);
  await registerLiveRoute(api, deps);
  registerConsoleOpenApiRoute(api, deps, docs);
}
