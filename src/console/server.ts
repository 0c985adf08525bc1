import Fastify, { type FastifyInstance } from 'fastify';
import { newId } from '../domain/ids.js';
import { createClientErrorHandler } from '../api/client-error.js';
import { DEFAULT_SHUTDOWN_GRACE_MS, trackInFlight } from '../api/in-flight.js';
import type { ConsoleDeps } from './deps.js';
import { registerConsole } from './plugin.js';

// The console on a listener of its own (CONSOLE_HOST:CONSOLE_PORT): the production default, so that an operator can
// keep it off the public internet (docs/console.md, "Where it listens").

export interface ConsoleServerOptions {
  logLevel: string;
  trustProxy: boolean | number | string[];
  requestTimeoutMs: number;
  /** SHUTDOWN_GRACE_MS: how long `close()` waits for the requests in flight (api/in-flight.ts). */
  shutdownGraceMs?: number;
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
  // As the API's listener: close() waits for the requests in flight before start()'s stop() destroys the pool.
  const inFlight = trackInFlight(app);
  app.addHook('onRequest', async (req, reply) => {
    reply.header('Request-Id', req.id);
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  await registerConsole(app, deps);
  inFlight.waitOnClose(o.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS); // last: its onClose hook runs first
  return app;
}
