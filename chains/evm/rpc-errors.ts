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

// eth_getLogs refusals of the big providers and node software (unit-tested one by one in test/unit/rpc-errors.test.ts):
//   Alchemy   "Log response size exceeded. ... this block range should work: [0x.., 0x..]",
//             "You can make eth_getLogs requests with up to a 500 block range. ... should work: [0x.., 0x..]"
//   Infura    "query returned more than 10000 results. Try with this block range [0x.., 0x..]." (-32005),
//             "range 1000000 exceeds limit of 10000" (-32602)
//   QuickNode "eth_getLogs is limited to a 10,000 range" (-32614)
//   Ankr, public nodes "block range is too wide", "block range too high", "Query exceeds max block range of 10000"
//   Bor/BSC (geth forks) "exceed maximum block range: 5000"; Morph-style "block range is larger than max block range"
//   Reth (Base's nodes) "query exceeds max block range 100000", "query exceeds max results 20000, retry with the range A-B"
//   Erigon-style gateways "requested too many blocks from A to B, maximum is set to 2048"
//   Tenderly "invalid params" with data "range 9009594 is bigger than range limit 2000" (the detail is in `data`)
//   EIP-1474 "limit exceeded" (-32005) alone: on eth_getLogs it is the provider's cap on blocks or results (a range to
//   shrink); on any other method, or naming a rate, it stays a rate limit.
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
  /limited to (a |an )?[\d,]+ (blocks? )?range/i,
  /\brange \d+ (exceeds|is bigger than) (the )?(range )?limit/i,
  /exceeds? max(imum)? (results|logs)/i,
];
const RATE = /rate limit|too many requests|capacity exceeded|request count|requests? per|rate exceeded|daily|credits/i;

/** Maps a JSON-RPC error object to an RpcError; `method` and the error's `data` refine it where providers are terse. */
export function classifyRpcError(code: number, message: string, method?: string, data?: unknown): RpcError {
  // Some gateways put the detail in `data` ({ payload: "range 9009594 is bigger than range limit 2000" }); a revert's
  // hex data is no detail. Used to recognise a range refusal only: every other kind keeps the message as it was.
  const raw = typeof data === 'string' ? data : (data as { payload?: unknown } | null)?.payload;
  const detail = typeof raw === 'string' && !/^0x[0-9a-f]*$/i.test(raw) ? raw : '';
  const text = detail ? `${message}: ${detail}` : message;
  if (RANGE_PATTERNS.some((p) => p.test(text))) {
    return new RpcError('range_too_large', text, code, suggestedUpperBlock(text));
  }
  if (code === 429 || RATE.test(message)) {
    return new RpcError('rate_limited', message, code);
  }
  if (method === 'eth_getLogs' && /^\s*limit exceeded\.?\s*$/i.test(message)) return new RpcError('range_too_large', message, code);
  if (code === -32005) return new RpcError('rate_limited', message, code);
  return new RpcError('rpc_error', message, code);
}

/** The error object of a JSON-RPC answer, classified. */
export function rpcErrorOf(error: { code?: unknown; message?: unknown; data?: unknown }, method?: string): RpcError {
  return classifyRpcError(Number(error.code ?? 0), String(error.message ?? ''), method, error.data);
}

/** Upper block of the range a provider suggests: "[0x1, 0x2]" (Alchemy, Infura) or "retry with the range 1-2" (Reth). */
function suggestedUpperBlock(message: string): bigint | null {
  const m = /\[\s*(0x[0-9a-f]+|\d+)\s*,\s*(0x[0-9a-f]+|\d+)\s*\]/i.exec(message) ?? /with the range (\d+)\s*-\s*(\d+)/i.exec(message);
  return m ? BigInt(m[2]!) : null;
}
