// A bare JSON-RPC call, used where @solana/web3.js hides the structured error (`sendTransaction` preflight
// failures carry `data.err`, which the payout pipeline maps to a reason).

export class SolanaRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: unknown,
  ) {
    super(message);
  }
}

export async function solanaRpcCall<T>(
  url: string,
  method: string,
  params: unknown[],
  timeoutMs = 15_000,
  fetchFn: typeof fetch = fetch,
): Promise<T> {
  const res = await fetchFn(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`solana RPC ${method}: HTTP ${res.status}`);
  const body = (await res.json()) as { result?: T; error?: { code: number; message: string; data?: unknown } };
  if (body.error) throw new SolanaRpcError(body.error.code, body.error.message, body.error.data);
  return body.result as T;
}
