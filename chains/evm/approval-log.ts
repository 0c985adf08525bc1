import { id, zeroPadValue } from 'ethers';
import type { RpcLog } from './rpc-types.js';

// ERC-20 / TRC-20 Approval(address indexed owner, address indexed spender, uint256 value).
export const APPROVAL_TOPIC = id('Approval(address,address,uint256)');

export interface DecodedApproval {
  token: string;
  owner: string;
  spender: string;
  value: bigint;
  txHash: string;
  logIndex: number;
  blockNumber: bigint;
}

/** Decodes a standard Approval log; null for anything else (removed logs, non-indexed variants, malformed data). */
export function decodeApprovalLog(log: RpcLog): DecodedApproval | null {
  if (log.removed) return null;
  if (log.topics.length !== 3 || log.topics[0]?.toLowerCase() !== APPROVAL_TOPIC) return null;
  if (!/^0x[0-9a-fA-F]{64}$/.test(log.data)) return null;
  return {
    token: log.address.toLowerCase(),
    owner: `0x${log.topics[1]!.slice(-40)}`.toLowerCase(),
    spender: `0x${log.topics[2]!.slice(-40)}`.toLowerCase(),
    value: BigInt(log.data),
    txHash: log.transactionHash.toLowerCase(),
    logIndex: Number(BigInt(log.logIndex)),
    blockNumber: BigInt(log.blockNumber),
  };
}

/** Topic form of an address (left-padded to 32 bytes), for eth_getLogs filters. */
export const addressTopic = (address: string): string => zeroPadValue(address, 32).toLowerCase();
