// Typed errors. Every error answer of the API has the shape {"error":{type,code,message,param,doc_url},request_id};
// StablepayError carries those fields. A request that got no answer (network error, timeout) after every retry is a
// StablepayConnectionError.

export class StablepayError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string,
    message: string,
    readonly param: string,
    readonly requestId: string,
    readonly docUrl: string,
  ) {
    super(message);
    this.name = 'StablepayError';
  }
}

export class StablepayConnectionError extends Error {
  constructor(
    message: string,
    override readonly cause: unknown,
  ) {
    super(message);
    this.name = 'StablepayConnectionError';
  }
}

export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: 'missing_header' | 'timestamp' | 'signature' | 'body',
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}
