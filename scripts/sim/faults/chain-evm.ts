import { jsonRpc } from './rpc.js';

// EVM chain faults for the simulator (issue #20 item 2; docs/simulation.md): a reorg of up to N blocks on an Anvil
// node through its `anvil_reorg` RPC, which removes the newest `depth` blocks and mines `depth` new ones in their place
// (same height, new hashes). Anvil does not put the removed blocks' transactions back in its pool: this function reads
// them first and, per `drop`, re-includes them in the new branch (signed bytes, same sender order) or lets them vanish.
// A dropped transaction also drops every later one of the same sender in the removed blocks (its nonce would no longer
// follow). `shift` moves re-included transactions that many blocks later than where they were (a new block number and
// hash for the same transaction), clamped to the new branch. `extend` mines that many further blocks on top, so the new
// branch is longer than the old one, as a real reorg's winning branch is.

export type ReorgDrop = 'none' | 'all' | 'alternate';

export interface EvmReorgParams {
  /** Blocks removed and replaced (at least 1; capped at the chain's height). */
  depth: number;
  /** 'none' re-includes every removed transaction, 'all' drops them all, 'alternate' drops every second one (in block
   * and index order; a sender's later transactions follow its first dropped one). Default 'none'. */
  drop?: ReorgDrop;
  /** Explicit hashes to drop (with their sender's later ones), on top of `drop`. */
  dropHashes?: string[];
  /** Blocks later than before that re-included transactions land (default 0), clamped to the new branch. */
  shift?: number;
  /** Extra blocks mined on the new branch after the reorg (default 0). */
  extend?: number;
}

export interface EvmReorgResult {
  /** Head height before (and, before `extend`, after) the reorg. */
  height: number;
  /** The blocks that left the canonical chain, oldest first. */
  removed: Array<{ number: number; hash: string }>;
  /** Transactions of the removed blocks now mined again on the new branch. */
  reincluded: string[];
  /** Transactions of the removed blocks that are gone (not mined, not pending). */
  dropped: string[];
  /** The new head after the reorg and `extend`. */
  head: { number: number; hash: string };
}

interface RpcBlock {
  number: string;
  hash: string;
  transactions: Array<{ hash: string; from: string }>;
}

export async function reorgEvm(rpcUrl: string, params: EvmReorgParams): Promise<EvmReorgResult> {
  if (!Number.isInteger(params.depth) || params.depth < 1) throw new Error(`reorg depth must be a positive integer, got ${params.depth}`);
  // A real node switches branches at once. Anvil's interval miner does not wait for anvil_reorg: a block it mined while
  // the reorg rewound and re-mined once left the node serving a head above a height it no longer had a block for
  // (seed 244 of the 1,000-seed run: eth_getBlockByNumber of a height below eth_blockNumber answered null for the rest
  // of the seed, and the TRON watcher, rightly, confirmed nothing past it). The miner is paused around the reorg.
  const interval = await jsonRpc<number | null>(rpcUrl, 'anvil_getIntervalMining');
  if (interval) await jsonRpc(rpcUrl, 'evm_setIntervalMining', [0]);
  try {
    return await reorgPaused(rpcUrl, params);
  } finally {
    if (interval) await jsonRpc(rpcUrl, 'evm_setIntervalMining', [interval]);
  }
}

async function reorgPaused(rpcUrl: string, params: EvmReorgParams): Promise<EvmReorgResult> {
  const height = Number(BigInt(await jsonRpc<string>(rpcUrl, 'eth_blockNumber')));
  const depth = Math.min(params.depth, height); // never below the genesis block
  if (depth === 0) return { height, removed: [], reincluded: [], dropped: [], head: await headOf(rpcUrl) };
  const first = height - depth + 1;
  const blocks: RpcBlock[] = [];
  for (let n = first; n <= height; n++) {
    const b = await jsonRpc<RpcBlock | null>(rpcUrl, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, true]);
    if (!b) throw new Error(`block ${n} vanished while reading the branch to reorg`);
    blocks.push(b);
  }
  const txs = blocks.flatMap((b, offset) => b.transactions.map((t) => ({ hash: t.hash, from: t.from.toLowerCase(), offset })));
  const dropSet = new Set((params.dropHashes ?? []).map((h) => h.toLowerCase()));
  const mode = params.drop ?? 'none';
  txs.forEach((t, i) => {
    if (mode === 'all' || (mode === 'alternate' && i % 2 === 1)) dropSet.add(t.hash.toLowerCase());
  });
  const droppedSenders = new Set<string>();
  const keep: typeof txs = [];
  const dropped: string[] = [];
  for (const t of txs) {
    if (droppedSenders.has(t.from) || dropSet.has(t.hash.toLowerCase())) {
      droppedSenders.add(t.from);
      dropped.push(t.hash);
    } else keep.push(t);
  }
  const shift = Math.max(0, Math.trunc(params.shift ?? 0));
  const pairs: Array<[string, number]> = [];
  for (const t of keep) {
    const raw = await jsonRpc<string | null>(rpcUrl, 'eth_getRawTransactionByHash', [t.hash]);
    if (!raw) throw new Error(`no raw bytes for ${t.hash}`);
    pairs.push([raw, Math.min(t.offset + shift, depth - 1)]);
  }
  await jsonRpc(rpcUrl, 'anvil_reorg', [depth, pairs]);
  const extend = Math.max(0, Math.trunc(params.extend ?? 0));
  if (extend > 0) await jsonRpc(rpcUrl, 'anvil_mine', [`0x${extend.toString(16)}`]);
  // Prove the outcome rather than trusting it: every kept transaction mined, every dropped one absent.
  for (const t of keep) {
    const r = await jsonRpc<{ blockNumber: string } | null>(rpcUrl, 'eth_getTransactionReceipt', [t.hash]);
    if (!r) throw new Error(`re-included transaction ${t.hash} is not mined after the reorg`);
  }
  return {
    height,
    removed: blocks.map((b) => ({ number: Number(BigInt(b.number)), hash: b.hash })),
    reincluded: keep.map((t) => t.hash),
    dropped,
    head: await headOf(rpcUrl),
  };
}

async function headOf(rpcUrl: string): Promise<{ number: number; hash: string }> {
  const b = await jsonRpc<RpcBlock>(rpcUrl, 'eth_getBlockByNumber', ['latest', false]);
  return { number: Number(BigInt(b.number)), hash: b.hash };
}
