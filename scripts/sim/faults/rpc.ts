// A bare JSON-RPC 2.0 call for the simulator's chain faults and invariants: they talk to a node's own URL (never
// through the fault proxy) and must not share the service's providers or retries.

export class JsonRpcCallError extends Error {
  constructor(
    readonly method: string,
    readonly code: number | undefined,
    message: string,
  ) {
    super(`${method}: ${message}`);
  }
}

export async function jsonRpc<T>(url: string, method: string, params: unknown[] = [], timeoutMs = 30_000): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await res.json()) as { result?: T; error?: { code?: number; message: string } };
  if (body.error) throw new JsonRpcCallError(method, body.error.code, body.error.message);
  return body.result as T;
}
