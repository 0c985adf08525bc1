import Fastify from 'fastify';
import type { RateLimiter } from '../../api/rate-limit.js';
import type { Json } from '../../api/openapi/schema-helpers.js';
import type { OperationsContext } from '../../operations/context.js';
import { registerConsoleApi } from '../api.js';
import type { ConsoleDeps } from '../deps.js';
import { collectRouteDocs } from './collect.js';
import { buildConsoleOpenApiDocument, CONSOLE_API_PREFIX } from './document.js';
import type { RouteDoc } from './route-doc.js';

// The console API's document without a running service (npm run openapi:validate, the tests): the console API is
// registered on a Fastify instance that never listens, with dependencies that are never used (registering a route
// only keeps them for its handler; no handler runs here), and the document is built from the routes it registered.

const UNUSED = Object.freeze({}) as never;

const INERT_DEPS: ConsoleDeps = {
  ops: UNUSED as OperationsContext,
  limiter: UNUSED as RateLimiter,
  docsUrl: '',
  settings: {
    secureCookies: true,
    idleTimeoutMs: 1,
    absoluteTimeoutMs: 1,
    loginFailuresPerAccount: 1,
    loginFailuresPerIp: 1,
    demo: false,
    liveIntervalMs: 1_000,
    uiDir: null,
  },
};

/** The document entries of every route of the console API, in registration order. */
export async function consoleApiRouteDocs(): Promise<readonly RouteDoc[]> {
  const app = Fastify({ logger: false });
  const docs: { list?: readonly RouteDoc[] } = {};
  await app.register(
    async (api) => {
      docs.list = collectRouteDocs(api);
      await registerConsoleApi(api, INERT_DEPS);
    },
    { prefix: CONSOLE_API_PREFIX },
  );
  await app.ready();
  await app.close();
  return docs.list ?? [];
}

export async function buildConsoleOpenApiDocumentNow(): Promise<Json> {
  return buildConsoleOpenApiDocument(await consoleApiRouteDocs());
}
