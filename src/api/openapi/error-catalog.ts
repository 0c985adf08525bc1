// Which error codes each operation can answer, by HTTP status (docs/errors.md has what each code means). The OpenAPI
// document narrows `error.code` of every error response to these lists, and the test client checks every response
// against the document, so a route that starts answering a code missing here fails its tests.

export type ErrorCodesByStatus = Partial<Record<number, readonly string[]>>;

const AUTH = [
  'invalid_api_key',
  'missing_auth_header',
  'merchant_mismatch',
  'timestamp_out_of_window',
  'invalid_signature',
  'nonce_reused',
] as const;

/** What any signed request can meet before or around its route: the HTTP layer, authentication, rate limits, bugs. */
export const SIGNED_COMMON: ErrorCodesByStatus = {
  400: ['invalid_request'],
  401: AUTH,
  404: ['resource_not_found'],
  408: ['request_timeout'],
  413: ['request_too_large'],
  429: ['rate_limit_exceeded'],
  431: ['request_header_too_large'],
  500: ['internal_error'],
};

/** The public endpoints (health, the document itself): only the HTTP layer and the per-IP limit. */
export const PUBLIC_COMMON: ErrorCodesByStatus = {
  400: ['invalid_request'],
  404: ['resource_not_found'],
  408: ['request_timeout'],
  413: ['request_too_large'],
  429: ['rate_limit_exceeded'],
  431: ['request_header_too_large'],
  500: ['internal_error'],
};

/** A JSON body that is read (creates and cancels): the body rules of docs/errors.md. */
const BODY = ['INVALID_JSON', 'parameter_invalid', 'parameter_unknown'] as const;
/** A query validated by a strict schema. */
const QUERY = ['parameter_invalid', 'parameter_unknown'] as const;

export const OPERATION_ERRORS = {
  createSession: {
    400: [...BODY, 'parameter_missing', 'INVALID_AMOUNT', 'INVALID_CURRENCY', 'order_id_conflict'],
    409: ['idempotency_key_reused'],
    503: ['rate_unavailable'],
  },
  getSession: {},
  cancelSession: { 400: [...BODY, 'session_expired', 'INVALID_SESSION_STATUS'], 409: ['idempotency_key_reused'] },
  listSessions: { 400: QUERY },
  createRefund: {
    400: [
      ...BODY,
      'parameter_missing',
      'MISSING_CHARGE',
      'MISSING_REFUND_ID',
      'INVALID_AMOUNT',
      'INVALID_CURRENCY',
      'INVALID_SESSION_STATUS',
      'REFUND_TIME_EXPIRED',
      'REFUND_AMOUNT_EXCEEDED',
      'INVALID_DEPOSIT_STATUS',
    ],
    403: ['session_access_denied', 'deposit_access_denied'],
    404: ['SESSION_NOT_FOUND', 'DEPOSIT_NOT_FOUND'],
    409: ['idempotency_key_reused'],
    429: ['DAILY_REFUND_LIMIT_EXCEEDED'],
  },
  getRefund: { 403: ['FORBIDDEN'], 404: ['REFUND_NOT_FOUND'] },
  cancelRefund: { 400: [...BODY, 'CANNOT_CANCEL_REFUND'], 403: ['FORBIDDEN'], 404: ['REFUND_NOT_FOUND'], 409: ['idempotency_key_reused'] },
  listRefunds: { 400: QUERY },
  createSubscription: {
    400: [...BODY, 'parameter_missing', 'INVALID_AMOUNT'],
    409: ['idempotency_key_reused'],
  },
  getSubscription: { 400: QUERY },
  listSubscriptions: { 400: QUERY },
  cancelSubscription: { 400: [...BODY, 'subscription_not_cancelable'], 409: ['idempotency_key_reused'] },
  getInvoice: { 400: QUERY },
  listInvoices: { 400: QUERY },
  getPayment: {},
  getPaymentMethod: {},
  exportRows: { 400: QUERY, 404: ['resource_not_found'], 503: ['replica_unavailable'] },
} as const satisfies Record<string, ErrorCodesByStatus>;

export type OperationId = keyof typeof OPERATION_ERRORS;

/** An operation's codes by status: its own merged with the common ones, each list sorted and without repeats. */
export function errorCodesOf(own: ErrorCodesByStatus, common: ErrorCodesByStatus): Map<number, string[]> {
  const out = new Map<number, Set<string>>();
  for (const table of [common, own]) {
    for (const [status, codes] of Object.entries(table)) {
      const set = out.get(Number(status)) ?? new Set<string>();
      for (const c of codes ?? []) set.add(c);
      out.set(Number(status), set);
    }
  }
  return new Map([...out.entries()].sort(([a], [b]) => a - b).map(([s, set]) => [s, [...set].sort()]));
}
