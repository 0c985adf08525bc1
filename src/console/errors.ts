import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { sendError, toApiError } from '../api/errors.js';

/** The console's error handler: every error in the spec's shape; a 5xx is logged, its cause never sent. */
export function consoleErrorHandler(docsUrl: string) {
  return (err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply) => {
    const apiErr = toApiError(err);
    if (apiErr.status >= 500) req.log.error({ err }, 'console request failed');
    return sendError(req, reply, apiErr, docsUrl);
  };
}
