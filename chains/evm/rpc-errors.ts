// Classification of JSON-RPC failures. The kind decides the reaction: shrink the getLogs range, back off, or give up.

export type RpcErrorKind = 'range_too_large' | 'rate_limited' | 'timeout' | 'unavailable' | 'rpc_error' | 'bad_response';

export class RpcError extends Error {
  constructor(
    readonly kind: RpcErrorKind,
    message: string,
    readonly code: number | null = null,
    /** Upper block of a range the provider suggested ("Try with this block range [0x1, 0x2]"). */
    readonly suggestedToBlock: bigint | null = null,
  ) {
    super(message);
  }
}

const RANGE_PATTERNS = [
  /more than \d+ results/i,
  /query returned more than/i,
  /block range/i,
  /range (is )?too (large|wide|big)/i,
  /exceed(s|ed)? .*range/i,
  /too many (blocks|logs|results)/i,
  /response size (should not|exceeded|is larger)/i,
  /log response size exceeded/i,
  /limit exceeded.*(logs|blocks)/i,
];

/** Maps a JSON-RPC error object to an RpcError. */
export function classifyRpcError(code: number, message: string): RpcError {
  if (RANGE_PATTERNS.some((p) => p.test(message))) {
    return new RpcError('range_too_large', message, code, suggestedUpperBlock(message));
  }
  if (code === 429 || /rate limit|too many requests|capacity exceeded/i.test(message)) {
    return new RpcError('rate_limited', message, code);
  }
  if (code === -32005) return new RpcError('rate_limited', message, code);
  return new RpcError('rpc_error', message, code);
}

function suggestedUpperBlock(message: string): bigint | null {
  const m = /\[\s*(0x[0-9a-f]+|\d+)\s*,\s*(0x[0-9a-f]+|\d+)\s*\]/i.exec(message);
  return m ? BigInt(m[2]!) : null;
}
