import { RpcError, rpcErrorOf } from './rpc-errors.js';

// Minimal JSON-RPC over HTTP. One call = one HTTP request (counted, for the "RPC calls per block" figure).
// No retries here: retry policy belongs to the caller (adaptive ranges in the scanner, backoff in the watcher).

/** What every JSON-RPC reader needs: one endpoint (JsonRpcClient) or a failover pool (chains/rpc/failover-rpc.ts). */
export interface RpcCaller {
  call<T>(method: string, params: unknown[]): Promise<T>;
}

/** One request of a JSON-RPC batch. */
export interface RpcRequest {
  method: string;
  params: unknown[];
}

/** One answer of a JSON-RPC batch, in the order of the requests: a batch succeeds or fails item by item. */
export type RpcBatchItem<T> = { ok: true; result: T } | { ok: false; error: RpcError };

export interface RpcClientOptions {
  url: string;
  timeoutMs?: number;
  /** Extra headers on every request (e.g. TronGrid's TRON-PRO-API-KEY). Values may be secrets: never logged. */
  headers?: Record<string, string>;
}

export class JsonRpcClient implements RpcCaller {
  readonly url: string;
  readonly #timeoutMs: number;
  readonly #headers: Record<string, string>;
  #nextId = 1;
  /** Calls made, by method. */
  readonly calls = new Map<string, number>();

  constructor(options: RpcClientOptions) {
    this.url = options.url;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#headers = { 'content-type': 'application/json', ...(options.headers ?? {}) };
  }

  get totalCalls(): number {
    let n = 0;
    for (const v of this.calls.values()) n += v;
    return n;
  }

  /**
   * Several requests in ONE HTTP request (a JSON-RPC batch array), counted once as `batch`. Answers are matched by id
   * and returned in request order; a failure of the whole request (transport, HTTP status, not a batch answer) throws.
   */
  async batch<T>(requests: readonly RpcRequest[]): Promise<Array<RpcBatchItem<T>>> {
    if (requests.length === 0) return [];
    this.calls.set('batch', (this.calls.get('batch') ?? 0) + 1);
    const first = this.#nextId;
    this.#nextId += requests.length;
    const body = JSON.stringify(requests.map((r, i) => ({ jsonrpc: '2.0', id: first + i, method: r.method, params: r.params })));
    const what = `batch of ${requests.length} ${requests[0]!.method}`;
    const { status, ok, text } = await this.#post(body, what);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new RpcError('bad_response', `${what}: HTTP ${status}, body is not JSON`);
    }
    if (!Array.isArray(parsed)) {
      const error = (parsed as { error?: { code?: number; message?: string } }).error;
      if (error) throw rpcErrorOf(error, requests[0]!.method);
      throw new RpcError('bad_response', `${what}: HTTP ${status}, not a batch answer`);
    }
    if (!ok) throw new RpcError('unavailable', `${what}: HTTP ${status}`, status);
    const byId = new Map<number, { result?: T; error?: { code?: number; message?: string } }>();
    for (const item of parsed as Array<{ id?: unknown; result?: T; error?: { code?: number; message?: string } }>)
      if (typeof item?.id === 'number') byId.set(item.id, item);
    return requests.map((r, i): RpcBatchItem<T> => {
      const item = byId.get(first + i);
      if (!item) return { ok: false, error: new RpcError('bad_response', `${r.method}: no answer in the batch`) };
      if (item.error) return { ok: false, error: rpcErrorOf(item.error, r.method) };
      if (!('result' in item)) return { ok: false, error: new RpcError('bad_response', `${r.method}: no result`) };
      return { ok: true, result: item.result as T };
    });
  }

  async #post(body: string, what: string): Promise<{ status: number; ok: boolean; text: string }> {
    let res: Response;
    try {
      res = await fetch(this.url, { method: 'POST', headers: this.#headers, body, signal: AbortSignal.timeout(this.#timeoutMs) });
    } catch (e) {
      const name = (e as { name?: string }).name;
      if (name === 'TimeoutError' || name === 'AbortError') throw new RpcError('timeout', `${what} timed out`);
      throw new RpcError('unavailable', `${what}: ${(e as Error).message}`);
    }
    const text = await res.text().catch(() => '');
    if (res.status === 429) throw new RpcError('rate_limited', `${what}: HTTP 429`, 429);
    if (res.status >= 500) throw new RpcError('unavailable', `${what}: HTTP ${res.status}`, res.status);
    return { status: res.status, ok: res.ok, text };
  }

  async call<T>(method: string, params: unknown[]): Promise<T> {
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
    const body = JSON.stringify({ jsonrpc: '2.0', id: this.#nextId++, method, params });
    const { status, ok, text } = await this.#post(body, method);
    let parsed: { result?: T; error?: { code?: number; message?: string } };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw new RpcError('bad_response', `${method}: HTTP ${status}, body is not JSON`);
    }
    if (parsed.error) throw rpcErrorOf(parsed.error, method);
    if (!ok) throw new RpcError('unavailable', `${method}: HTTP ${status}`, status);
    if (!('result' in parsed)) throw new RpcError('bad_response', `${method}: no result`);
    return parsed.result as T;
  }
}
