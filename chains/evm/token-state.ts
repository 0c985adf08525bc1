import { Interface } from 'ethers';
import type { TokenRefusal } from '../types.js';
import type { TransferFee } from '../tokens/transfer-fee.js';
import { RpcError } from './rpc-errors.js';
import type { JsonRpcClient } from './rpc-client.js';

// Optional views of the stablecoin contracts, read to explain a refusal and to foresee a transfer fee. A view the token
// does not have reverts (no fallback) or answers nothing: that reads as "no such view", never as an error.
const VIEWS = new Interface([
  'function paused() view returns (bool)',
  'function isBlackListed(address who) view returns (bool)',
  'function isBlacklisted(address who) view returns (bool)',
  'function basisPointsRate() view returns (uint256)',
  'function maximumFee() view returns (uint256)',
]);

/** One view's 32-byte word, or null when the token has no such view. Transport failures propagate. */
async function readWord(rpc: JsonRpcClient, contract: string, data: string, block: string): Promise<bigint | null> {
  try {
    const raw = await rpc.call<string>('eth_call', [{ to: contract, data }, block]);
    return /^0x[0-9a-fA-F]{64,}$/.test(raw) ? BigInt(raw.slice(0, 66)) : null;
  } catch (e) {
    if (e instanceof RpcError && e.kind === 'rpc_error') return null;
    throw e;
  }
}

async function flag(rpc: JsonRpcClient, contract: string, fn: string, args: unknown[], block: string): Promise<boolean> {
  return (await readWord(rpc, contract, VIEWS.encodeFunctionData(fn, args), block)) === 1n;
}

async function blacklisted(rpc: JsonRpcClient, contract: string, who: string, block: string): Promise<boolean> {
  const [tether, fiat] = await Promise.all([flag(rpc, contract, 'isBlackListed', [who], block), flag(rpc, contract, 'isBlacklisted', [who], block)]);
  return tether || fiat;
}

/**
 * Why `contract` refuses to move tokens from `sender` to `recipient` (sent by `spender` for a transferFrom), as of
 * `block`; null when its state shows none of the known reasons. Paused first: a paused token refuses everyone.
 */
export async function readTokenRefusal(
  rpc: JsonRpcClient,
  contract: string,
  parties: { sender: string; recipient: string; spender?: string },
  block: string,
): Promise<TokenRefusal | null> {
  if (await flag(rpc, contract, 'paused', [], block)) return 'token_paused';
  if (await blacklisted(rpc, contract, parties.sender, block)) return 'sender_blacklisted';
  if (await blacklisted(rpc, contract, parties.recipient, block)) return 'recipient_blacklisted';
  if (parties.spender !== undefined && (await blacklisted(rpc, contract, parties.spender, block))) return 'spender_blacklisted';
  return null;
}

/** Tether's announced fee on transfers, or null for a token without the views (or with the fee at zero). */
export async function readTransferFee(rpc: JsonRpcClient, contract: string, block = 'latest'): Promise<TransferFee | null> {
  const [basisPoints, maximumFee] = await Promise.all([
    readWord(rpc, contract, VIEWS.encodeFunctionData('basisPointsRate'), block),
    readWord(rpc, contract, VIEWS.encodeFunctionData('maximumFee'), block),
  ]);
  if (basisPoints === null || maximumFee === null || basisPoints === 0n || maximumFee === 0n) return null;
  return { basisPoints, maximumFee };
}
