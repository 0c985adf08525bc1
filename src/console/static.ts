import type { FastifyInstance } from 'fastify';
import type { ConsoleDeps } from './deps.js';

// The built single-page app (placeholder: issue 35).
export async function registerConsoleStatic(_app: FastifyInstance, _deps: ConsoleDeps): Promise<void> {}
