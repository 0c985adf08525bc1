import { ApiError } from '../domain/errors.js';

// A refusal of an operator action by the application layer itself (not a spec error of the ledger): the console
// answers it as the spec's error shape, the CLI prints its message alone (as it always did) and exits 2.
export class Refusal extends ApiError {}

export const refusal = (message: string, code = 'action_refused', param?: string, status = 400): Refusal =>
  new Refusal(status, status === 404 ? 'invalid_request_error' : 'invalid_request_error', code, message, param);
