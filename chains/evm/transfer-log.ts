import { id } from 'ethers';
import type { RpcLog } from './rpc-types.js';

// ERC-20 / TRC-20 Transfer(address indexed from, address indexed to, uint256 value).
export const TRANSFER_TOPIC = id('Transfer(address,address,uint256)');

export interface DecodedTransfer {
  token: string;
  from: string;
  to: string;
  amount: bigint;
  txHash: string;
  logIndex: number;
  blockNumber: bigint;
  blockHash: string;
}

/** Decodes a standard Transfer log; null for anything else (non-indexed variants, removed logs, malformed data). */
export function decodeTransferLog(log: RpcLog): DecodedTransfer | null {
  if (log.removed) return null;
  if (log.topics.length !== 3 || log.topics[0]?.toLowerCase() !== TRANSFER_TOPIC) return null;
  if (!/^0x[0-9a-fA-F]{64}$/.test(log.data)) return null;
  return {
    token: log.address.toLowerCase(),
    from: topicAddress(log.topics[1]!),
    to: topicAddress(log.topics[2]!),
    amount: BigInt(log.data),
    txHash: log.transactionHash.toLowerCase(),
    logIndex: Number(BigInt(log.logIndex)),
    blockNumber: BigInt(log.blockNumber),
    blockHash: log.blockHash.toLowerCase(),
  };
}

function topicAddress(topic: string): string {
  return `0x${topic.slice(-40)}`.toLowerCase();
}
