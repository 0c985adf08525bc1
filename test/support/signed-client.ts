import { createHmac, randomUUID } from 'node:crypto';
import { assertResponseMatchesDocument, warmUpOpenApiCheck } from './openapi-check.js';

// The test client signs with its own implementation of the spec's algorithm (interface.md: Authentication),
// deliberately sharing no code with the server: hex(HMAC-SHA256(secret, `${timestamp}.${nonce}.${body}`)).

export interface Credentials {
  key: string;
  secret: string;
  merchantId?: string;
}

export interface SignedRequestOptions {
  /** A Buffer is sent and signed as exactly these bytes (for bodies that are not UTF-8). */
  body?: string | Buffer | Record<string, unknown>;
  timestamp?: number;
  nonce?: string;
  headers?: Record<string, string | undefined>;
  /** Sign with this instead of the credentials' secret. */
  signWith?: string;
  omit?: Array<'authorization' | 'timestamp' | 'nonce' | 'signature'>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export function sign(secret: string, timestamp: string, nonce: string, body: string | Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.${nonce}.`, 'utf8').update(body).digest('hex');
}

export class SignedClient {
  constructor(
    readonly baseUrl: string,
    readonly creds: Credentials,
  ) {
    warmUpOpenApiCheck(); // once per process: the document and its validators are ready before the first request
  }

  async request(method: 'GET' | 'POST', path: string, opts: SignedRequestOptions = {}): Promise<TestResponse> {
    const body =
      opts.body === undefined
        ? method === 'GET'
          ? ''
          : '{}'
        : typeof opts.body === 'string' || Buffer.isBuffer(opts.body)
          ? opts.body
          : JSON.stringify(opts.body);
    const timestamp = String(opts.timestamp ?? Math.floor(Date.now() / 1000));
    const nonce = opts.nonce ?? randomUUID();
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.creds.key}`,
      'x-service-timestamp': timestamp,
      'x-service-nonce': nonce,
      'x-service-signature': sign(opts.signWith ?? this.creds.secret, timestamp, nonce, body),
    };
    if (method !== 'GET') headers['content-type'] = 'application/json';
    if (this.creds.merchantId) headers['x-merchant-id'] = this.creds.merchantId;
    const names = {
      authorization: 'authorization',
      timestamp: 'x-service-timestamp',
      nonce: 'x-service-nonce',
      signature: 'x-service-signature',
    };
    for (const o of opts.omit ?? []) delete headers[names[o]];
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      if (v === undefined) delete headers[k.toLowerCase()];
      else headers[k.toLowerCase()] = v;
    }
    const res = await fetch(this.baseUrl + path, { method, headers, body: method === 'GET' ? undefined : body });
    const text = await res.text();
    // Every answer must be one the OpenAPI document describes (docs/openapi.md).
    assertResponseMatchesDocument(method, path, res.status, res.headers.get('content-type'), text);
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  }

  get(path: string, opts?: SignedRequestOptions) {
    return this.request('GET', path, opts);
  }

  post(path: string, body?: SignedRequestOptions['body'], opts?: SignedRequestOptions) {
    return this.request('POST', path, { ...opts, body });
  }
}
