import { randomUUID } from 'node:crypto';
import { StablepayConnectionError, StablepayError } from './errors.js';
import { signedHeaders } from './sign.js';
import type {
  CancelSubscriptionRequest,
  CreateRefundRequest,
  CreateSessionRequest,
  CreateSubscriptionRequest,
  Invoice,
  InvoiceList,
  Payment,
  PaymentMethod,
  PaymentSession,
  PaymentSessionPage,
  Refund,
  RefundCancellation,
  RefundPage,
  Subscription,
  SubscriptionCancellation,
  SubscriptionList,
} from './types.js';

// The Stablepay API client: every operation of the OpenAPI document as a method, each request signed. Creates carry
// an Idempotency-Key (generated unless given; a refund's own refund_id is its key), so they are retried safely on a
// network error, 429 or 5xx, like every read; so are cancels, which send one too (a retry after a lost answer gets
// that answer again instead of being refused as already canceled).

export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  /** Sent as X-Merchant-Id when given. */
  merchantId?: string;
  /** Retries after the first attempt; default 2. */
  maxRetries?: number;
  /** Per attempt; default 30 s. */
  timeoutMs?: number;
  /** First backoff; doubles per retry, with up to +25 % jitter; default 500 ms. */
  retryDelayMs?: number;
  fetch?: typeof fetch;
}

type Query = Record<string, string | number | undefined>;
interface Call {
  method: 'GET' | 'POST';
  path: string;
  query?: Query;
  body?: unknown;
  idempotencyKey?: string;
  retry: boolean;
}

export class StablepayClient {
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly o: ClientOptions) {
    this.fetchImpl = o.fetch ?? fetch;
  }

  readonly sessions = {
    create: (body: CreateSessionRequest, opts: { idempotencyKey?: string } = {}) =>
      this.call<PaymentSession>({ method: 'POST', path: '/checkout/sessions/create', body, idempotencyKey: opts.idempotencyKey ?? randomUUID(), retry: true }),
    retrieve: (id: string) => this.call<PaymentSession>({ method: 'GET', path: `/checkout/sessions/${enc(id)}`, retry: true }),
    cancel: (id: string, opts: { idempotencyKey?: string } = {}) =>
      this.call<PaymentSession>({
        method: 'POST',
        path: `/checkout/sessions/${enc(id)}/cancel`,
        body: {},
        idempotencyKey: opts.idempotencyKey ?? randomUUID(),
        retry: true,
      }),
    list: (query: { page?: number; page_size?: number; cursor?: string; status?: string; order_id?: string } = {}) =>
      this.call<PaymentSessionPage>({ method: 'GET', path: '/checkout/sessions', query, retry: true }),
    /** Every session, page after page (follows pagination.next_cursor). */
    all: (query: { page_size?: number; status?: string; order_id?: string } = {}) =>
      this.pages((cursor) => this.sessions.list({ ...query, cursor })),
  };

  readonly refunds = {
    /** `refund_id` is the idempotency key: the same refund_id and body replay the refund, so retries are safe. */
    create: (body: CreateRefundRequest) => this.call<Refund>({ method: 'POST', path: '/refunds/create', body, retry: true }),
    retrieve: (refundId: string) => this.call<Refund>({ method: 'GET', path: `/refunds/${enc(refundId)}`, retry: true }),
    cancel: (refundId: string, opts: { idempotencyKey?: string } = {}) =>
      this.call<RefundCancellation>({
        method: 'POST',
        path: `/refunds/${enc(refundId)}/cancel`,
        body: {},
        idempotencyKey: opts.idempotencyKey ?? randomUUID(),
        retry: true,
      }),
    list: (query: { page?: number; page_size?: number; cursor?: string; status?: string; session_id?: string } = {}) =>
      this.call<RefundPage>({ method: 'GET', path: '/refunds', query, retry: true }),
    all: (query: { page_size?: number; status?: string; session_id?: string } = {}) => this.pages((cursor) => this.refunds.list({ ...query, cursor })),
  };

  readonly subscriptions = {
    create: (body: CreateSubscriptionRequest, opts: { idempotencyKey?: string } = {}) =>
      this.call<Subscription>({ method: 'POST', path: '/subscriptions/create', body, idempotencyKey: opts.idempotencyKey ?? randomUUID(), retry: true }),
    retrieve: (id: string, opts: { expand?: Array<'latest_invoice' | 'customer' | 'payment_method'> } = {}) =>
      this.call<Subscription>({ method: 'GET', path: `/subscriptions/${enc(id)}`, query: { expand: opts.expand?.join(',') }, retry: true }),
    cancel: (id: string, body: CancelSubscriptionRequest = {}, opts: { idempotencyKey?: string } = {}) =>
      this.call<SubscriptionCancellation>({
        method: 'POST',
        path: `/subscriptions/${enc(id)}/cancel`,
        body,
        idempotencyKey: opts.idempotencyKey ?? randomUUID(),
        retry: true,
      }),
    list: (query: { limit?: number; starting_after?: string; ending_before?: string; customer?: string; status?: string } = {}) =>
      this.call<SubscriptionList>({ method: 'GET', path: '/subscriptions', query, retry: true }),
    all: (query: { limit?: number; customer?: string; status?: string } = {}) =>
      this.cursorPages((after) => this.subscriptions.list({ ...query, starting_after: after })),
  };

  readonly invoices = {
    retrieve: (id: string) => this.call<Invoice>({ method: 'GET', path: `/invoices/${enc(id)}`, retry: true }),
    list: (query: { limit?: number; starting_after?: string; ending_before?: string; subscription_id?: string; customer?: string; status?: string } = {}) =>
      this.call<InvoiceList>({ method: 'GET', path: '/invoices', query, retry: true }),
    all: (query: { limit?: number; subscription_id?: string; customer?: string; status?: string } = {}) =>
      this.cursorPages((after) => this.invoices.list({ ...query, starting_after: after })),
  };

  readonly payments = {
    retrieve: (id: string) => this.call<Payment>({ method: 'GET', path: `/payment/${enc(id)}`, retry: true }),
  };

  readonly paymentMethods = {
    retrieve: (id: string) => this.call<PaymentMethod>({ method: 'GET', path: `/payment_method/${enc(id)}`, retry: true }),
  };

  private async *pages<T>(page: (cursor: string | undefined) => Promise<{ data: T[]; pagination: { next_cursor: string | null } }>): AsyncGenerator<T> {
    let cursor: string | undefined;
    do {
      const p = await page(cursor);
      yield* p.data;
      cursor = p.pagination.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }

  private async *cursorPages<T extends { id: string }>(page: (after: string | undefined) => Promise<{ data: T[]; has_more: boolean }>): AsyncGenerator<T> {
    let after: string | undefined;
    for (;;) {
      const p = await page(after);
      yield* p.data;
      if (!p.has_more || p.data.length === 0) return;
      after = p.data[p.data.length - 1]!.id;
    }
  }

  private async call<T>(c: Call): Promise<T> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(c.query ?? {})) if (v !== undefined) qs.set(k, String(v));
    const url = `${this.o.baseUrl.replace(/\/$/, '')}/api/v1${c.path}${qs.size > 0 ? `?${qs}` : ''}`;
    const body = c.method === 'GET' ? '' : JSON.stringify(c.body ?? {});
    const retries = c.retry ? (this.o.maxRetries ?? 2) : 0;
    for (let attempt = 0; ; attempt++) {
      // Signed afresh for every attempt: a new nonce and timestamp; the same body and Idempotency-Key.
      const headers: Record<string, string> = signedHeaders(this.o.apiKey, this.o.apiSecret, body);
      if (c.method === 'POST') headers['content-type'] = 'application/json';
      if (c.idempotencyKey) headers['idempotency-key'] = c.idempotencyKey;
      if (this.o.merchantId) headers['x-merchant-id'] = this.o.merchantId;
      let res: Response;
      try {
        res = await this.fetchImpl(url, {
          method: c.method,
          headers,
          body: c.method === 'GET' ? undefined : body,
          signal: AbortSignal.timeout(this.o.timeoutMs ?? 30_000),
        });
      } catch (err) {
        if (attempt < retries) {
          await this.backoff(attempt);
          continue;
        }
        throw new StablepayConnectionError(`${c.method} ${c.path}: no answer (${(err as Error).message})`, err);
      }
      const text = await res.text();
      if (res.ok) return JSON.parse(text) as T;
      if ((res.status === 429 || res.status >= 500) && attempt < retries) {
        await this.backoff(attempt, Number(res.headers.get('retry-after')) || 0);
        continue;
      }
      throw toError(res.status, text, res.headers.get('request-id') ?? '');
    }
  }

  private backoff(attempt: number, retryAfterS = 0): Promise<void> {
    const base = (this.o.retryDelayMs ?? 500) * 2 ** attempt;
    const ms = Math.max(base * (1 + Math.random() * 0.25), retryAfterS * 1000);
    return new Promise((r) => setTimeout(r, ms));
  }
}

const enc = encodeURIComponent;

function toError(status: number, text: string, requestId: string): StablepayError {
  try {
    const b = JSON.parse(text) as { error?: { type?: string; code?: string; message?: string; param?: string; doc_url?: string }; request_id?: string };
    if (b.error?.code) {
      return new StablepayError(status, b.error.type ?? '', b.error.code, b.error.message ?? '', b.error.param ?? '', b.request_id ?? requestId, b.error.doc_url ?? '');
    }
  } catch {}
  return new StablepayError(status, 'api_error', 'unexpected_response', `HTTP ${status}: ${text.slice(0, 200)}`, '', requestId, '');
}
