import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../domain/errors.js';
import { sendError } from '../api/errors.js';
import { consoleErrorHandler } from './errors.js';
import type { ConsoleDeps } from './deps.js';
import { registerConsoleAuth } from './auth/index.js';
import { registerConsoleStatic } from './static.js';
import { CONSOLE_CSP } from './security-headers.js';
import { registerConsoleResources } from './routes/index.js';
import { registerLiveRoute } from './live/routes.js';

// The web console (docs/console.md): its typed API under <base>/api/ (console session cookie only, never a merchant
// API key) and the built single-page app under <base>/. Served by a listener of its own (server.ts, the production
// default) or, when CONSOLE_PATH is set, under that path of the public listener.

export async function registerConsole(app: FastifyInstance, deps: ConsoleDeps, base = ''): Promise<void> {
  await app.register(
    async (scope) => {
      scope.addHook('onSend', async (_req, reply) => {
        reply
          .header('Content-Security-Policy', CONSOLE_CSP)
          .header('X-Content-Type-Options', 'nosniff')
          .header('Referrer-Policy', 'no-referrer')
          .header('X-Frame-Options', 'DENY')
          .header('Cross-Origin-Opener-Policy', 'same-origin')
          .header('Cross-Origin-Resource-Policy', 'same-origin');
      });
      scope.setErrorHandler(consoleErrorHandler(deps.docsUrl));
      await scope.register(
        async (api) => {
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
        },
        { prefix: '/api' },
      );
      await registerConsoleStatic(scope, deps);
    },
    { prefix: base },
  );
}
