import type { FastifyInstance } from 'fastify';
import type { ConsoleDeps } from '../deps.js';
import { registerAuthRoutes } from './routes.js';
import { addSessionHook } from './session-hook.js';

// Sign-in, sessions, TOTP, CSRF and the session hook of every other console API route (docs/console.md, "Accounts and
// security"). Called on the console API scope before any resource route is registered.
export async function registerConsoleAuth(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  addSessionHook(app, deps);
  registerAuthRoutes(app, deps);
}
