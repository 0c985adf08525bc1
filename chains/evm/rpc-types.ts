import { RpcError } from './rpc-errors.js';
import type { BlockRef } from '../types.js';
import type { RpcCaller } from './rpc-client.js';

// Wire shapes of the Ethereum JSON-RPC answers we read (quantities are 0x-hex strings).

export interface RpcBlockHeader {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
  baseFeePerGas?: string;
}

export interface RpcLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  transactionHash: string;
  logIndex: string;
  removed?: boolean;
}

export interface RpcReceipt {
  transactionHash: string;
  blockNumber: string;
  blockHash: string;
  status: string;
  from: string;
  to: string | null;
  gasUsed: string;
  effectiveGasPrice?: string;
  logs: RpcLog[];
}

export interface HeaderRef extends BlockRef {
  parentHash: string;
}

export const toHex = (n: bigint): string => `0x${n.toString(16)}`;

function headerRef(h: RpcBlockHeader): HeaderRef {
  return {
    height: BigInt(h.number),
    hash: h.hash.toLowerCase(),
    parentHash: h.parentHash.toLowerCase(),
    time: new Date(Number(BigInt(h.timestamp)) * 1000),
  };
}

/** The endpoint has no block at a height it should have (at or below its own head): a lagging or lying node. */
export class MissingBlockError extends RpcError {
  constructor(message: string) {
    super('bad_response', message);
  }
}

/** Header by number or tag; a missing block is a transient condition (node behind its own head, or a reorg). */
export async function fetchHeader(rpc: RpcCaller, block: bigint | 'latest' | 'finalized' | 'safe'): Promise<HeaderRef> {
  const tag = typeof block === 'bigint' ? toHex(block) : block;
  const h = await rpc.call<RpcBlockHeader | null>('eth_getBlockByNumber', [tag, false]);
  if (!h) throw new MissingBlockError(`block ${tag} not found`);
  return headerRef(h);
}
