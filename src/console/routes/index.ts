import type { FastifyInstance } from 'fastify';
import type { ConsoleDeps } from '../deps.js';

// Every console resource's routes. One line per area; each area's file holds its routes and nothing else.
export async function registerConsoleResources(_app: FastifyInstance, _deps: ConsoleDeps): Promise<void> {}
