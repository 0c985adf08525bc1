import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { reportingRead } from '../../operations/reporting.js';
import { search } from '../../operations/search.js';
import { merchantScope } from '../actor.js';
import { type SearchResult, searchResultSchema } from '../contract/stranded.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from '../route.js';

// The console's search box (GET /search?q=): exact lookups by id, order id, deposit address or transaction hash.
export function registerSearchRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  consoleRoute(app, deps.ops.db, {
    method: 'GET',
    url: '/search',
    summary: 'Find a session, refund or deposit by id, order id, address or transaction hash',
    response: searchResultSchema,
    query: z.strictObject({ q: z.string().trim().min(1).max(200), merchant_id: z.string().min(1).max(64).optional() }),
    handler: async ({ actor, query }): Promise<SearchResult> => ({
      hits: await reportingRead(deps.ops, (db) => search({ db }, query.q, merchantScope(actor, query.merchant_id))),
    }),
  });
}
