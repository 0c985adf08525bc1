import type { FastifyInstance } from 'fastify';
import type { ConsoleDeps } from '../deps.js';
import { registerPaymentRoutes } from './payments.js';
import { registerRefundRoutes } from './refunds.js';
import { registerSearchRoutes } from './search.js';
import { registerStrandedRoutes } from './stranded.js';

// Every console resource's routes. One line per area; each area's file holds its routes and nothing else.
export async function registerConsoleResources(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  registerPaymentRoutes(app, deps);
  registerRefundRoutes(app, deps);
  registerStrandedRoutes(app, deps);
  registerSearchRoutes(app, deps);
}
