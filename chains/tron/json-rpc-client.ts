import { JsonRpcClient, type RpcClientOptions } from '../evm/rpc-client.js';
import { RpcError, classifyRpcError } from '../evm/rpc-errors.js';

// JSON-RPC client for java-tron's Ethereum-compatible endpoint (`/jsonrpc`). Identical to the EVM client except for
// extra request headers: TronGrid rate-limits keyless traffic and takes its key in the `TRON-PRO-API-KEY` header.
// TEMPORARY: exists only because JsonRpcClient has no `headers` option yet (change request in docs/tron.md). With
// headers there, this file becomes `new JsonRpcClient({ url, timeoutMs, headers })`. Error classification, the call
// counters and the no-retry policy are the EVM client's own (classifyRpcError, `calls`).

export interface TronJsonRpcClientOptions extends RpcClientOptions {
  /** Extra headers on every request (e.g. TRON-PRO-API-KEY). Values are secrets: never logged. */
  headers?: Record<string, string>;
}

export class TronJsonRpcClient extends JsonRpcClient {
  readonly #headers: Record<string, string>;
  readonly #timeout: number;
  #id = 1;

  constructor(o: TronJsonRpcClientOptions) {
    super(o);
    this.#headers = { ...(o.headers ?? {}) };
    this.#timeout = o.timeoutMs ?? 10_000;
  }

  override async call<T>(method: string, params: unknown[]): Promise<T> {
    if (Object.keys(this.#headers).length === 0) return super.call<T>(method, params);
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
    let res: Response;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...this.#headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: this.#id++, method, params }),
        signal: AbortSignal.timeout(this.#timeout),
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
