import type { FastifyInstance } from 'fastify';
import type { ConsoleDeps } from '../deps.js';
import { registerBooksRoutes } from './books.js';
import { registerOverviewRoutes } from './overview.js';
import { registerSweepRoutes } from './sweeps.js';
import { registerTreasuryRoutes } from './treasury.js';
import { registerWalletRoutes } from './wallets.js';

// Every console resource's routes. One line per area; each area's file holds its routes and nothing else.
export async function registerConsoleResources(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  await registerOverviewRoutes(app, deps);
  await registerTreasuryRoutes(app, deps);
  await registerSweepRoutes(app, deps);
  await registerBooksRoutes(app, deps);
  await registerWalletRoutes(app, deps);
}
