import type { FastifyInstance } from 'fastify';
import { ROUTE_DOC, type RouteDoc } from './route-doc.js';

/**
 * The document entries of every route registered on `api` (and its children) from now on, in registration order. A
 * route without one is refused at registration: the console's API cannot grow an undocumented route. Fastify's own
 * HEAD twin of each GET route is left out (the document describes the GET).
 */
export function collectRouteDocs(api: FastifyInstance): readonly RouteDoc[] {
  const docs: RouteDoc[] = [];
  api.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.every((m) => m === 'HEAD')) return;
    const doc = (route.config as Record<string, unknown> | undefined)?.[ROUTE_DOC] as RouteDoc | undefined;
    if (!doc) throw new Error(`console API route ${methods.join(',')} ${route.url} has no document entry (consoleRoute or routeDoc)`);
    docs.push(doc);
  });
  return docs;
}
