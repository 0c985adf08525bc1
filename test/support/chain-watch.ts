import { id, zeroPadValue } from 'ethers';
import type { AnvilNode } from './anvil.js';

const TRANSFER_TOPIC = id('Transfer(address,address,uint256)');

/** Transfer logs of `token` from `from` (and to `to` when given), read straight from the node. */
export async function transfersFrom(
  node: AnvilNode,
  token: string,
  from: string,
  to?: string,
): Promise<Array<{ to: string; amount: bigint; tx: string }>> {
  const topics: Array<string | null> = [TRANSFER_TOPIC, zeroPadValue(from, 32)];
  if (to) topics.push(zeroPadValue(to, 32));
  const logs = await node.rpc<Array<{ topics: string[]; data: string; transactionHash: string }>>('eth_getLogs', [
    { address: token, fromBlock: '0x0', toBlock: 'latest', topics },
  ]);
  return logs.map((l) => ({ to: `0x${l.topics[2]!.slice(26)}`, amount: BigInt(l.data), tx: l.transactionHash }));
}

/** Mines a block every `ms` until stopped: confirmations keep coming while a test waits. */
export function backgroundMiner(node: AnvilNode, ms = 200): { stop(): void } {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    node
      .mine(1)
      .catch(() => {})
      .finally(() => (busy = false));
  }, ms);
  return { stop: () => clearInterval(timer) };
}
