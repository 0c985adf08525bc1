import type { RpcLog, RpcReceipt } from '../../../chains/evm/rpc-types.js';
import type { SimEvmChain } from '../contract.js';

export type { RpcReceipt };
import { jsonRpc } from '../faults/rpc.js';

// Reads of the canonical EVM chain for the invariants, at the node's own URL (never the fault proxy): Transfer logs,
// receipts, block times, token decimals. Addresses are compared lowercase (the ledger's canonical EVM form).

export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

export interface ChainTransfer {
  token: string;
  contract: string;
  from: string;
  to: string;
  value: bigint;
  blockNumber: bigint;
  blockHash: string;
  txHash: string;
  logIndex: number;
}

/** An EVM-style JSON-RPC ledger: an EVM chain of the simulator, or TRON's /jsonrpc (tron-chain.ts). */
export type EvmLike = Omit<SimEvmChain, 'network' | 'chainId'> & { network: string };

const topicOf = (address: string) => `0x${address.toLowerCase().replace(/^0x/, '').padStart(64, '0')}`;
const addressOf = (topic: string) => `0x${topic.slice(26)}`.toLowerCase();

export function tokenSymbolOf(chain: EvmLike, contract: string): string | undefined {
  const c = contract.toLowerCase();
  return Object.entries(chain.tokens).find(([, a]) => a.toLowerCase() === c)?.[0];
}

function toTransfer(chain: EvmLike, l: RpcLog): ChainTransfer | null {
  if (l.topics[0]?.toLowerCase() !== TRANSFER_TOPIC || l.topics.length < 3) return null;
  const token = tokenSymbolOf(chain, l.address);
  if (!token) return null;
  return {
    token,
    contract: l.address.toLowerCase(),
    from: addressOf(l.topics[1]!),
    to: addressOf(l.topics[2]!),
    value: BigInt(l.data === '0x' ? 0 : l.data),
    blockNumber: BigInt(l.blockNumber),
    blockHash: l.blockHash.toLowerCase(),
    txHash: l.transactionHash.toLowerCase(),
    logIndex: Number(BigInt(l.logIndex)),
  };
}

/** Every registry-token Transfer on the canonical chain with the given `from` and/or `to` (lists allowed). */
export async function transfers(chain: EvmLike, o: { from?: string[]; to?: string[]; toBlock?: bigint }): Promise<ChainTransfer[]> {
  const contracts = Object.values(chain.tokens);
  if (contracts.length === 0 || (o.from && o.from.length === 0) || (o.to && o.to.length === 0)) return [];
  const out: ChainTransfer[] = [];
  // Chunks of addresses keep each topic list small (nodes cap the filter size).
  const chunk = <T>(xs: T[] | undefined): Array<T[] | undefined> => {
    if (!xs) return [undefined];
    const r: T[][] = [];
    for (let i = 0; i < xs.length; i += 200) r.push(xs.slice(i, i + 200));
    return r;
  };
  for (const from of chunk(o.from))
    for (const to of chunk(o.to)) {
      const logs = await jsonRpc<RpcLog[]>(chain.rpcUrl, 'eth_getLogs', [
        {
          address: contracts,
          fromBlock: '0x0',
          toBlock: o.toBlock === undefined ? 'latest' : `0x${o.toBlock.toString(16)}`,
          topics: [TRANSFER_TOPIC, from ? from.map(topicOf) : null, to ? to.map(topicOf) : null],
        },
      ]);
      for (const l of logs) {
        if (l.removed) continue;
        const t = toTransfer(chain, l);
        if (t) out.push(t);
      }
    }
  return out.sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
}

export async function headNumber(chain: EvmLike): Promise<bigint> {
  return BigInt(await jsonRpc<string>(chain.rpcUrl, 'eth_blockNumber'));
}

/** The highest block the service treats as confirmed (chains/evm/block-scanner.ts: head − confirmations + 1). */
export async function confirmedHeight(chain: EvmLike): Promise<bigint> {
  return (await headNumber(chain)) - BigInt(chain.confirmations) + 1n;
}

/** Block timestamps in ms, memoised per call site. */
export function blockTimes(chain: EvmLike): (n: bigint) => Promise<number> {
  const cache = new Map<bigint, Promise<number>>();
  return (n) => {
    let p = cache.get(n);
    if (!p) {
      p = jsonRpc<{ timestamp: string }>(chain.rpcUrl, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false]).then(
        (b) => Number(BigInt(b.timestamp)) * 1000,
      );
      cache.set(n, p);
    }
    return p;
  };
}

/** The canonical receipt of `hash`, or null when the transaction is not mined on the canonical chain. */
export async function receipt(chain: EvmLike, hash: string): Promise<RpcReceipt | null> {
  // TRON txIDs are stored bare (64 hex digits); java-tron's JSON-RPC takes them 0x-prefixed like any hash.
  return jsonRpc<RpcReceipt | null>(chain.rpcUrl, 'eth_getTransactionReceipt', [hash.startsWith('0x') ? hash : `0x${hash}`]);
}

export function receiptTransfers(chain: EvmLike, r: RpcReceipt): ChainTransfer[] {
  return r.logs.flatMap((l) => {
    const t = toTransfer(chain, l);
    return t ? [t] : [];
  });
}

/** The token's decimals: the chain's own `decimals()` unless the runner gave them (SimEvmChain.decimals). */
export async function tokenDecimals(chain: EvmLike, symbol: string): Promise<number> {
  const given = chain.decimals?.[symbol];
  if (given !== undefined) return given;
  const address = chain.tokens[symbol];
  if (!address) throw new Error(`${chain.network}: no ${symbol} contract in the simulator's chain list`);
  const r = await jsonRpc<string>(chain.rpcUrl, 'eth_call', [{ to: address, data: '0x313ce567' }, 'latest']);
  return Number(BigInt(r));
}

/** The simulator's chain of `network`, when it runs one. */
export function evmChain(chains: SimEvmChain[], network: string): SimEvmChain | undefined {
  return chains.find((c) => c.network === network);
}
