import { RpcError, classifyRpcError } from './rpc-errors.js';

// Minimal JSON-RPC over HTTP. One call = one HTTP request (counted, for the "RPC calls per block" figure).
// No retries here: retry policy belongs to the caller (adaptive ranges in the scanner, backoff in the watcher).

/** What every JSON-RPC reader needs: one endpoint (JsonRpcClient) or a failover pool (chains/rpc/failover-rpc.ts). */
export interface RpcCaller {
  call<T>(method: string, params: unknown[]): Promise<T>;
}

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
   * Several calls in one HTTP request (a JSON-RPC batch), answers in request order. Counted as one `batch` call. Any
   * error in one answer fails the batch (the caller retries it whole).
   */
  async batch<T>(requests: ReadonlyArray<{ method: string; params: unknown[] }>): Promise<T[]> {
    this.calls.set('batch', (this.calls.get('batch') ?? 0) + 1);
    const first = this.#nextId;
    this.#nextId += requests.length;
    const body = JSON.stringify(requests.map((r, i) => ({ jsonrpc: '2.0', id: first + i, method: r.method, params: r.params })));
    let res: Response;
    try {
      res = await fetch(this.url, { method: 'POST', headers: this.#headers, body, signal: AbortSignal.timeout(this.#timeoutMs * 3) });
    } catch (e) {
      const name = (e as { name?: string }).name;
      if (name === 'TimeoutError' || name === 'AbortError') throw new RpcError('timeout', 'batch timed out');
      throw new RpcError('unavailable', `batch: ${(e as Error).message}`);
    }
    const text = await res.text().catch(() => '');
    if (res.status === 429) throw new RpcError('rate_limited', 'batch: HTTP 429', 429);
    if (res.status >= 500 || !res.ok) throw new RpcError('unavailable', `batch: HTTP ${res.status}`, res.status);
    let parsed: Array<{ id?: number; result?: T; error?: { code?: number; message?: string } }>;
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw new RpcError('bad_response', `batch: HTTP ${res.status}, body is not JSON`);
    }
    if (!Array.isArray(parsed)) throw new RpcError('bad_response', 'batch: answer is not an array');
    const byId = new Map(parsed.map((p) => [Number(p.id), p]));
    return requests.map((r, i) => {
      const p = byId.get(first + i);
      if (!p) throw new RpcError('bad_response', `batch: no answer to ${r.method}`);
      if (p.error) throw classifyRpcError(Number(p.error.code ?? 0), String(p.error.message ?? ''));
      if (!('result' in p)) throw new RpcError('bad_response', `${r.method}: no result`);
      return p.result as T;
    });
  }

  async call<T>(method: string, params: unknown[]): Promise<T> {
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
    const body = JSON.stringify({ jsonrpc: '2.0', id: this.#nextId++, method, params });
    let res: Response;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers: this.#headers,
        body,
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (e) {
      const name = (e as { name?: string }).name;
      if (name === 'TimeoutError' || name === 'AbortError') throw new RpcError('timeout', `${method} timed out`);
      throw new RpcError('unavailable', `${method}: ${(e as Error).message}`);
    }
    const text = await res.text().catch(() => '');
    if (res.status === 429) throw new RpcError('rate_limited', `${method}: HTTP 429`, 429);
    if (res.status >= 500) throw new RpcError('unavailable', `${method}: HTTP ${res.status}`, res.status);
    let parsed: { result?: T; error?: { code?: number; message?: string } };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw new RpcError('bad_response', `${method}: HTTP ${res.status}, body is not JSON`);
    }
    if (parsed.error) throw classifyRpcError(Number(parsed.error.code ?? 0), String(parsed.error.message ?? ''));
    if (!res.ok) throw new RpcError('unavailable', `${method}: HTTP ${res.status}`, res.status);
    if (!('result' in parsed)) throw new RpcError('bad_response', `${method}: no result`);
    return parsed.result as T;
  }
}
