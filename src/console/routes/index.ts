import type { FastifyInstance } from 'fastify';
import type { ConsoleDeps } from '../deps.js';
import { registerAuditRoutes } from './audit.js';
import { registerUserRoutes } from './users.js';

// Every console resource's routes. One line per area; each area's file holds its routes and nothing else.
export async function registerConsoleResources(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  registerUserRoutes(app, deps);
  registerAuditRoutes(app, deps);
}
