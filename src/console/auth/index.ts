import type { FastifyInstance } from 'fastify';
import type { ConsoleDeps } from '../deps.js';

// Sign-in, sessions, TOTP, CSRF and the session hook of every other console API route (placeholder: issue 35).
export async function registerConsoleAuth(_app: FastifyInstance, _deps: ConsoleDeps): Promise<void> {}
