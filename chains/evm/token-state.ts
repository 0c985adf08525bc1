import type { ReadView } from '../tokens/token-views.js';
import { RpcError } from './rpc-errors.js';
import type { RpcCaller } from './rpc-client.js';

/**
 * A view of `contract` over eth_call at `block`: its first word, or null when the token has no such view (the call
 * reverts or answers nothing). Transport failures propagate.
 */
export function evmViewReader(rpc: RpcCaller, contract: string, block: string): ReadView {
  return async (data) => {
    try {
      const raw = await rpc.call<string>('eth_call', [{ to: contract, data }, block]);
      return /^0x[0-9a-fA-F]{64,}$/.test(raw) ? BigInt(raw.slice(0, 66)) : null;
    } catch (e) {
      if (e instanceof RpcError && e.kind === 'rpc_error') return null;
      throw e;
    }
  };
}
