import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../domain/errors.js';
import { SignerUnavailableError } from '../domain/signer-errors.js';

// Every error leaves in the full spec shape with request_id and timestamp; nothing else ever answers an error.
// `param` is always a string (interface.md types it so): "" when no single parameter is at fault.

export const ERROR_TYPES = [
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'rate_limit_error',
  'idempotency_error',
  'api_error',
] as const satisfies readonly ApiError['type'][];

/** The one error body (the OpenAPI document's `Error`); each operation narrows `code` to the codes it can answer. */
export const errorBodySchema = z.strictObject({
  error: z.strictObject({
    type: z.enum(ERROR_TYPES),
    code: z.string(),
    message: z.string(),
    param: z.string().meta({ description: 'The offending parameter in Stripe-style brackets, or "" when none is at fault.' }),
    doc_url: z.string(),
  }),
  request_id: z.string(),
  timestamp: z.number().int(),
});

export function errorBody(err: ApiError, requestId: string, docsUrl: string) {
  return {
    error: {
      type: err.type,
      code: err.code,
      message: err.message,
      param: err.param ?? '',
      doc_url: `${docsUrl}#${err.code.toLowerCase()}`,
    },
    request_id: requestId,
    timestamp: Math.floor(Date.now() / 1000),
  };
}

/** Maps Fastify's own errors (body too large, bad content length, ...) and unknown throwables to ApiError. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  // The signer role did not answer (a public key for a deposit address): nothing was changed, the caller retries.
  if (err instanceof SignerUnavailableError)
    return new ApiError(503, 'api_error', 'signer_unavailable', 'The signing service is unavailable; nothing was changed. Retry later.');
  const e = err as { code?: string; statusCode?: number };
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'invalid_request_error', 'request_too_large', 'The request body is larger than the limit.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(400, 'invalid_request_error', 'INVALID_JSON', 'The request body could not be read as JSON.');
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError(404, 'invalid_request_error', 'resource_not_found', 'Unrecognized request URL.');
  }
  if (e?.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500) {
    return new ApiError(400, 'invalid_request_error', 'invalid_request', 'The request could not be processed.');
  }
  return new ApiError(500, 'api_error', 'internal_error', 'An internal error occurred; nothing was changed. Retry later.');
}

export function sendError(req: FastifyRequest, reply: FastifyReply, err: ApiError, docsUrl: string): FastifyReply {
  return reply
    .code(err.status)
    .type('application/json')
    .send(errorBody(err, req.id, docsUrl));
}
