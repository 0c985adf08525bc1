import type { FastifyInstance } from 'fastify';
import { consoleErrorHandler } from './errors.js';
import type { ConsoleDeps } from './deps.js';
import { registerConsoleStatic } from './static.js';
import { CONSOLE_CSP } from './security-headers.js';
import { registerConsoleApi } from './api.js';

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
      await scope.register(async (api) => registerConsoleApi(api, deps), { prefix: '/api' });
      await registerConsoleStatic(scope, deps);
    },
    { prefix: base },
  );
}
