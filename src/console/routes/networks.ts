import type { FastifyInstance } from 'fastify';
import { configuredNetworks } from '../../operations/networks.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from '../route.js';
import { networksResponseSchema } from '../contract/networks.js';

// GET /api/networks: the configured networks and tokens (operations/networks.ts), for the pages' choices.
export function registerNetworkRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  consoleRoute(app, deps.ops.db, {
    method: 'GET',
    url: '/networks',
    summary: 'The networks, modes and tokens configured here',
    response: networksResponseSchema,
    handler: async () => ({ data: configuredNetworks(deps.ops) }),
  });
}
