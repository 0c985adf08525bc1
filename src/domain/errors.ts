// Errors as the spec shapes them: {"error":{type,code,message,param,doc_url},"request_id","timestamp"}.
// Spec-listed codes keep their exact spelling (decisions.md); the others are lowercase snake case.

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'rate_limit_error'
  | 'idempotency_error'
  | 'api_error';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string,
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

export const invalidRequest = (code: string, message: string, param?: string, status = 400): ApiError =>
  new ApiError(status, 'invalid_request_error', code, message, param);

export const parameterMissing = (param: string): ApiError =>
  invalidRequest('parameter_missing', `Missing required parameter: ${param}.`, param);

export const parameterInvalid = (param: string, message: string): ApiError => invalidRequest('parameter_invalid', message, param);

export const parameterUnknown = (param: string): ApiError =>
  invalidRequest('parameter_unknown', `Received unknown parameter: ${param}.`, param);

export const invalidAmount = (param: string, detail: string): ApiError =>
  invalidRequest('INVALID_AMOUNT', `Invalid amount in ${param}: ${detail}.`, param);

export const resourceNotFound = (param: string, what: string): ApiError =>
  invalidRequest('resource_not_found', `No such ${what}.`, param, 404);

export const authError = (code: string, message: string, param?: string): ApiError =>
  new ApiError(401, 'authentication_error', code, message, param);

export const idempotencyKeyReused = (param: string): ApiError =>
  new ApiError(
    409,
    'idempotency_error',
    'idempotency_key_reused',
    'This idempotency key was already used with a different request body.',
    param,
  );

export const rateUnavailable = (): ApiError =>
  new ApiError(503, 'api_error', 'rate_unavailable', 'No exchange-rate source answered; nothing was created. Retry later.');

/** A reporting read that must not fall back to the primary found the read replica down (src/db/read-db.ts). */
export const replicaUnavailable = (): ApiError =>
  new ApiError(
    503,
    'api_error',
    'replica_unavailable',
    'The reporting database (read replica) is unavailable; nothing was read. Retry later.',
  );
