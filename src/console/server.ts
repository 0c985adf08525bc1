import Fastify, { type FastifyInstance } from 'fastify';
import { newId } from '../domain/ids.js';
import { createClientErrorHandler } from '../api/client-error.js';
import type { ConsoleDeps } from './deps.js';
import { registerConsole } from './plugin.js';

// The console on a listener of its own (CONSOLE_HOST:CONSOLE_PORT): the production default, so that an operator can
// keep it off the public internet (docs/console.md, "Where it listens").

export interface ConsoleServerOptions {
  logLevel: string;
  trustProxy: boolean | number | string[];
  requestTimeoutMs: number;
}

export async function buildConsoleServer(deps: ConsoleDeps, o: ConsoleServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    requestTimeout: o.requestTimeoutMs,
    logger: { level: o.logLevel, redact: ['req.headers.cookie', 'req.headers["x-csrf-token"]'] },
    genReqId: () => newId('req'),
    trustProxy: typeof o.trustProxy === 'number' ? (_a: string, hop: number) => hop < (o.trustProxy as number) : o.trustProxy,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 300 },
    clientErrorHandler: createClientErrorHandler(deps.docsUrl, (err, code) => app.log.info({ code, err: err.message }, 'client error')),
  });
  app.addHook('onRequest', async (req, reply) => {
    reply.header('Request-Id', req.id);
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  await registerConsole(app, deps);
  return app;
}
