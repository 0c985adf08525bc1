import pLimit from 'p-limit';
import {
  DeepReorgError,
  type CursorState,
  type LookalikeContract,
  type ObservedTransfer,
  type PollResult,
  type TokenContract,
  type UnsupportedTransfer,
  type WatchSet,
} from '../types.js';
import { RpcError } from './rpc-errors.js';
import { endpointFault, type FailoverJsonRpc, type PinnedRpc } from './failover-rpc.js';
import { MissingBlockError, fetchHeader, toHex, type HeaderRef, type RpcLog } from './rpc-types.js';
import { TRANSFER_TOPIC, decodeTransferLog } from './transfer-log.js';
import { cursorAt, decodeCursor, encodeCursor, finalSeen, type ScanCursor } from './cursor.js';
import { highestCanonical, mergeCheckpoints } from './checkpoints.js';

/**
 * When a block is final: `confirmations` deep on the head, or at or below the node's `finalized` / `safe` block (and,
 * with `minDepth`, also that deep: both). The network registry's `finality` chooses the default (docs/chains.md).
 */
export type ConfirmationPolicy = { kind: 'depth'; confirmations: number } | { kind: 'finalized' | 'safe'; minDepth?: number };

export interface BlockScannerOptions {
  rpc: FailoverJsonRpc;
  /** Endpoints that must agree on the final block before it counts as final (1 = the pinned endpoint alone). */
  finalityQuorum?: number;
  tokens: readonly TokenContract[];
  /** Look-alike contracts (20-byte hex): their transfers TO watched addresses are reported as `unsupported`. */
  lookalikes?: readonly LookalikeContract[];
  confirmation: ConfirmationPolicy;
  /** Largest getLogs range tried; the working range shrinks on provider limits and grows back on success. */
  maxBlockRange: number;
  /** Addresses found in logs are converted to the canonical form of the network (identity on EVM, hex->base58 on TRON). */
  canonicalAddress?: (hex20: string) => string;
}

/** The chain moved under a poll (a block changed between calls): nothing was delivered; poll again. */
export class ChainMovedError extends RpcError {
  constructor(message: string) {
    super('bad_response', message);
  }
}

/**
 * Scans Transfer logs of the registry's token contracts block range by block range. RPC calls per poll, whatever the
 * number of blocks in the range (docs/chains.md, "Calls per poll"): the head (pin), the final height's header (tag
 * mode), the range end's header twice (before and after its logs), the cursor tip's header, one getLogs per range (more
 * only when a provider refuses a range as too large), the final height's header when no checkpoint holds it yet, and
 * the headers of blocks holding a matched transfer. None of it depends on the number of watched addresses either:
 * matching is local.
 *
 * Consistency within a poll: the range end's hash is read before anything else of the poll and again after its logs.
 * A changed block at or below the range end changes the range end's hash, so equal hashes mean that the tip check, the
 * final height's header and the logs were all answered from one chain, the one ending at that block (unless the node
 * left that chain and came back to it between the two reads); different hashes fail the poll (ChainMovedError).
 */
export class BlockScanner {
  readonly #o: BlockScannerOptions;
  readonly #byContract: Map<string, TokenContract>;
  readonly #lookalikes: Map<string, LookalikeContract>;
  /** The getLogs address filter: the tokens' contracts, then the look-alikes'. */
  readonly #addresses: string[];
  #span: number;
  readonly #limit = pLimit(8);

  constructor(options: BlockScannerOptions) {
    this.#o = options;
    this.#byContract = new Map(options.tokens.map((t) => [t.address.toLowerCase(), t]));
    this.#lookalikes = new Map((options.lookalikes ?? []).map((l) => [l.address.toLowerCase(), l]));
    for (const [address, l] of this.#lookalikes) {
      const token = this.#byContract.get(address);
      if (token) throw new Error(`look-alike ${l.symbol} has the address of the ${token.symbol} contract ${address}`);
    }
    this.#addresses = [...this.#byContract.keys(), ...this.#lookalikes.keys()];
    this.#span = options.maxBlockRange;
  }

  /** Current working getLogs range (for metrics and tests). */
  get span(): number {
    return this.#span;
  }

  /** Head and final height, both from one pinned endpoint (and agreed by the quorum when one is configured). */
  async head(pinned?: PinnedRpc): Promise<{ latest: bigint; final: bigint }> {
    const { latest, final } = await this.#finality(pinned ?? (await this.#o.rpc.pin()));
    return { latest, final };
  }

  /** head(), with the final block's header when reading the final height read it (tag mode, quorum). */
  async #finality(rpc: PinnedRpc): Promise<{ latest: bigint; final: bigint; finalRef: HeaderRef | null }> {
    const latest = rpc.head;
    const c = this.#o.confirmation;
    let ref = c.kind === 'finalized' ? await fetchHeader(rpc, 'finalized') : null;
    let final = ref ? ref.height : latest - BigInt(c.kind === 'depth' ? c.confirmations : 0) + 1n;
    if ((this.#o.finalityQuorum ?? 1) > 1) ({ final, ref } = await this.#quorumFinal(rpc, final));
    if (final > latest) final = latest;
    return { latest, final, finalRef: ref?.height === final ? ref : null };
  }

  async #finalOf(rpc: PinnedRpc): Promise<bigint> {
    const c = this.#o.confirmation;
    if (c.kind === 'depth') return rpc.head - BigInt(c.confirmations) + 1n;
    const tagged = (await fetchHeader(rpc, c.kind)).height;
    const deep = c.minDepth === undefined ? tagged : rpc.head - BigInt(c.minDepth) + 1n;
    return deep < tagged ? deep : tagged;
  }

  /**
   * The final height agreed by `finalityQuorum` endpoints: the lowest of their final heights, and only when they all
   * hold the same block there. Fewer endpoints answering, or two hashes, fail the poll (nothing is confirmed).
   */
  async #quorumFinal(pinned: PinnedRpc, final: bigint): Promise<{ final: bigint; ref: HeaderRef | null }> {
    const q = this.#o.finalityQuorum ?? 1;
    const votes: Array<{ rpc: PinnedRpc; final: bigint }> = [{ rpc: pinned, final }];
    for (const other of this.#o.rpc.others(pinned)) {
      if (votes.length >= q) break;
      try {
        votes.push({ rpc: other, final: await this.#finalOf(other) });
      } catch {
        /* the pool recorded the endpoint's fault; ask the next one */
      }
    }
    if (votes.length < q) throw new RpcError('unavailable', `finality quorum: ${votes.length} of ${q} endpoints answered`);
    let agreed = votes.reduce((m, v) => minBig(m, v.final), final);
    if (agreed < 0n) agreed = 0n;
    const headers = await Promise.all(
      votes.map((v) =>
        fetchHeader(v.rpc, agreed).catch((e: unknown) => {
          throw new RpcError('unavailable', `finality quorum: ${v.rpc.label} has no block ${agreed}: ${(e as Error).message}`);
        }),
      ),
    );
    if (new Set(headers.map((h) => h.hash)).size > 1) {
      throw new RpcError(
        'unavailable',
        `finality quorum: endpoints disagree on block ${agreed} (${votes.map((v, i) => `${v.rpc.label}=${headers[i]!.hash}`).join(', ')})`,
      );
    }
    return { final: agreed, ref: headers[0]! };
  }

  async initialCursor(startHeight?: bigint): Promise<ScanCursor> {
    const rpc = await this.#o.rpc.pin();
    const start = startHeight ?? (await this.head(rpc)).final;
    return cursorAt(await fetchHeader(rpc, start < 0n ? 0n : start));
  }

  async poll(state: CursorState, watch: WatchSet): Promise<PollResult> {
    const cursor = decodeCursor(state);
    const rpc = await this.#o.rpc.pin();
    try {
      return await this.#poll(rpc, cursor, watch);
    } catch (e) {
      // A poll reads heads, blocks and logs at or below the pinned endpoint's own head: a block missing there, answers
      // that do not link up, or a JSON-RPC error (other than a range to shrink) are the endpoint's fault. Transport
      // faults were recorded by the pool already; errors this scanner raises about other endpoints are 'unavailable'.
      if (
        e instanceof MissingBlockError ||
        e instanceof ChainMovedError ||
        (e instanceof RpcError && e.kind === 'rpc_error' && endpointFault(e) === null)
      ) {
        rpc.fault(e.message);
      }
      throw e;
    }
  }

  async #poll(rpc: PinnedRpc, cursor: ScanCursor, watch: WatchSet): Promise<PollResult> {
    const latest = rpc.head;
    const tip = cursor.tip;
    const from = tip.height + 1n;
    // 1. The range end, read first (and again after the logs, step 4).
    const rangeEnd = latest > tip.height ? minBig(latest, from + BigInt(this.#span) - 1n) : null;
    const before = rangeEnd === null ? null : await fetchHeader(rpc, rangeEnd);
    const { final, finalRef } = await this.#finality(rpc);
    await watch.sync();

    // An endpoint behind the block we already processed (failover to a slower node): nothing to read from it yet, and
    // nothing confirmed beyond what the cursor already anchors.
    if (latest < tip.height) {
      const anchored = cursor.final ?? final;
      return {
        rollbackAbove: null,
        transfers: [],
        unsupported: [],
        finalHeight: minBig(final, anchored),
        processedTip: tip,
        cursor: encodeCursor({ ...cursor, final: anchored }),
        caughtUp: true,
      };
    }

    // 2. The final height this poll reports needs a checkpoint once the tip reaches it (the rollback's ancestor search
    //    then never goes below it for a reorg that left it in place, so never raises a false DeepReorgError). Read
    //    before the tip check (or inside the range end's two reads): a block replaced in between fails that check.
    const record = finalSeen(cursor, final);
    const reach = rangeEnd ?? tip.height;
    const needAnchor = record >= 0n && record <= reach && !cursor.recent.some((c) => c.height === record);
    const readAnchor = async () => (needAnchor ? (finalRef?.height === record ? finalRef : await fetchHeader(rpc, record)) : null);
    let anchor: HeaderRef | null;
    let tipNow: HeaderRef;
    if (before) [tipNow, anchor] = await Promise.all([fetchHeader(rpc, tip.height), readAnchor()]);
    else {
      anchor = await readAnchor();
      tipNow = await fetchHeader(rpc, tip.height);
    }

    // Is the block we stopped at still canonical? If not, walk back to the highest checkpoint still canonical.
    if (tipNow.hash !== tip.hash) {
      if (this.#o.rpc.size > 1) await this.#confirmReorg(rpc, tip.height, tip.hash, tipNow.hash);
      return this.#rollback(rpc, cursor, final);
    }

    if (rangeEnd === null || before === null) {
      const next: ScanCursor = {
        tip,
        recent: mergeCheckpoints(cursor.recent, anchor ? [anchor] : [], minBig(record, tip.height)),
        final: record,
      };
      return {
        rollbackAbove: null,
        transfers: [],
        unsupported: [],
        finalHeight: final,
        processedTip: tip,
        cursor: encodeCursor(next),
        caughtUp: true,
      };
    }

    // 3. Logs of the token contracts over the next range (adaptive size).
    const { logs, to } = await this.#getLogs(rpc, from, rangeEnd);

    // 4. Headers: the new tip (when a provider made the range shorter), blocks with a matched transfer (for their
    //    timestamps), and the range end again, which must not have changed since step 1.
    const all = logs.flatMap((log) => this.#match(log, watch));
    const headers = new Map<bigint, HeaderRef>([[rangeEnd, before]]);
    if (anchor) headers.set(anchor.height, anchor);
    if (!headers.has(to)) headers.set(to, await fetchHeader(rpc, to)); // before the second read: inside the bracket
    const missing = [...new Set(all.map((m) => m.blockNumber))].filter((h) => !headers.has(h));
    const [after] = await Promise.all([
      fetchHeader(rpc, rangeEnd),
      ...missing.map((h) => this.#limit(async () => headers.set(h, await fetchHeader(rpc, h)))),
    ]);
    if (after.hash !== before.hash) throw new ChainMovedError(`block ${rangeEnd} changed while its range was read`);

    const transfers: ObservedTransfer[] = [];
    const outgoing: ObservedTransfer[] = [];
    const unsupported: UnsupportedTransfer[] = [];
    for (const m of all) {
      const header = headers.get(m.blockNumber)!;
      if (header.hash !== m.blockHash) throw new ChainMovedError(`log of block ${m.blockNumber} from another branch`);
      const block = { height: header.height, hash: header.hash, time: header.time };
      if ('unsupported' in m) {
        unsupported.push({ ...m.unsupported, block });
        continue;
      }
      const t = { ...m.transfer, block };
      if (m.incoming) transfers.push(t);
      if (m.outgoing) outgoing.push(t);
    }
    transfers.sort(chainOrder);
    outgoing.sort(chainOrder);
    unsupported.sort(chainOrder);

    const tipHeader = headers.get(to)!;
    const added = [...all.map((m) => headers.get(m.blockNumber)!), ...(anchor && anchor.height <= to ? [anchor] : []), tipHeader];
    const next: ScanCursor = {
      tip: { height: to, hash: tipHeader.hash, time: tipHeader.time },
      recent: mergeCheckpoints(cursor.recent, added, minBig(record, to)),
      final: record,
    };
    return {
      rollbackAbove: null,
      transfers,
      outgoing,
      unsupported,
      finalHeight: final,
      processedTip: next.tip,
      cursor: encodeCursor(next),
      caughtUp: to >= latest,
    };
  }

  /**
   * A hash at `height` that differs from the stored one is a reorg only when another endpoint says so too. Another
   * endpoint holding the stored hash means the pinned one is lying or on a minority fork: it is faulted and the poll
   * fails (the next one runs elsewhere). No other endpoint answering fails the poll: nothing is rolled back unconfirmed.
   */
  async #confirmReorg(pinned: PinnedRpc, height: bigint, stored: string, seen: string): Promise<void> {
    for (const other of this.#o.rpc.others(pinned)) {
      if (other.head < height) continue;
      let hash: string;
      try {
        hash = (await fetchHeader(other, height)).hash;
      } catch {
        continue;
      }
      if (hash === seen) return;
      if (hash === stored) {
        const reason = `block ${height}: hash ${seen} contradicts ${other.label} and the stored ${stored}`;
        pinned.fault(reason);
        throw new RpcError('unavailable', `reorg signal not confirmed: ${reason}`);
      }
      throw new RpcError('unavailable', `reorg signal not confirmed: block ${height} has a third hash on ${other.label}`);
    }
    throw new RpcError('unavailable', `reorg signal at block ${height} from ${pinned.label} not confirmed: no other endpoint answered`);
  }

  /**
   * Rolls back above the highest checkpoint still canonical (possibly below the real common ancestor when the blocks
   * between hold no checkpoint: they are re-scanned, and their transfers observed again, idempotently). Blocks holding
   * a matched transfer are checkpoints, so a rollback only orphans transfers of blocks that were really replaced,
   * unless thinning (chains/evm/checkpoints.ts) dropped their checkpoint.
   */
  async #rollback(rpc: PinnedRpc, cursor: ScanCursor, final: bigint): Promise<PollResult> {
    const candidates = cursor.recent.filter((b) => b.height < cursor.tip.height);
    const seen = new Map<bigint, HeaderRef>();
    const b = await highestCanonical(candidates, async (c) => {
      const now = await fetchHeader(rpc, c.height);
      seen.set(c.height, now);
      return now.hash === c.hash;
    });
    if (!b) throw new DeepReorgError(`reorg deeper than the tracked unconfirmed blocks below height ${cursor.tip.height}`);
    const now = seen.get(b.height)!;
    // Blocks above the ancestor were replaced. If one of them was at or below a final height reported with the
    // cursor, a credit may already have been confirmed from it: a reorg deeper than the policy, for an operator.
    // Judged by the cursor's own final height, not the new branch's: a shallow reorg seen only once the new branch
    // has grown past the replaced blocks by the confirmation depth (a watcher behind, or a reorg that extends the
    // chain) replaced nothing that was ever final (simulator seed 108).
    const confirmedThrough = cursor.final ?? final;
    if (b.height + 1n <= confirmedThrough)
      throw new DeepReorgError(`reorg replaced block ${b.height + 1n} at or below final height ${confirmedThrough}`);
    const recent = cursor.recent.filter((r) => r.height <= b.height);
    // This step confirms credits up to the ancestor at most (every provisional one above it is rolled back), and only
    // up to a checkpoint, so that the cursor's final height keeps its anchor.
    const reach = minBig(final, b.height);
    const anchored = recent.filter((r) => r.height <= reach).at(-1)?.height ?? reach;
    const record = finalSeen(cursor, anchored);
    const next: ScanCursor = { tip: { height: now.height, hash: now.hash, time: now.time }, recent, final: record };
    return {
      rollbackAbove: b.height,
      transfers: [],
      unsupported: [],
      finalHeight: minBig(final, record),
      processedTip: next.tip,
      cursor: encodeCursor(next),
      caughtUp: false,
    };
  }

  async #getLogs(rpc: PinnedRpc, from: bigint, to: bigint): Promise<{ logs: RpcLog[]; to: bigint }> {
    let end = to;
    for (;;) {
      try {
        // `to` is at most the pinned endpoint's own head: its answer covers the whole range.
        const logs = await rpc.call<RpcLog[]>('eth_getLogs', [
          { fromBlock: toHex(from), toBlock: toHex(end), address: this.#addresses, topics: [TRANSFER_TOPIC] },
        ]);
        const used = Number(end - from + 1n);
        if (used >= this.#span) this.#span = Math.min(this.#o.maxBlockRange, this.#span * 2);
        return { logs, to: end };
      } catch (e) {
        if (!(e instanceof RpcError) || e.kind !== 'range_too_large' || end === from) throw e;
        const suggested = e.suggestedToBlock;
        end = suggested !== null && suggested >= from && suggested < end ? suggested : from + (end - from) / 2n;
        this.#span = Math.max(1, Number(end - from + 1n));
      }
    }
  }

  /**
   * A registry token's Transfer log to (incoming) or from (outgoing: the journal's unexplained movements) a watched
   * address; a look-alike's log to a watched address (unsupported). A look-alike leaving a watched address is ignored:
   * the service never sends one, and it is no asset of the books (docs/journal.md).
   */
  #match(log: RpcLog, watch: WatchSet): Match[] {
    const d = decodeTransferLog(log);
    if (!d) return [];
    const token = this.#byContract.get(d.token);
    const lookalike = token ? undefined : this.#lookalikes.get(d.token);
    if (!token && !lookalike) return []; // unrelated contract
    const toCanon = this.#o.canonicalAddress ?? ((a: string) => a);
    const to = toCanon(d.to);
    const from = toCanon(d.from);
    const incoming = watch.has(to);
    const outgoing = watch.has(from);
    if (lookalike) {
      if (!incoming) return [];
      const { txHash, logIndex, amount } = d;
      const unsupported = {
        txHash,
        logIndex,
        token: lookalike.symbol,
        tokenContract: lookalike.address,
        note: lookalike.note,
        from,
        to,
        amount,
      };
      return [{ blockNumber: d.blockNumber, blockHash: d.blockHash, unsupported }];
    }
    if (!token || (!incoming && !outgoing)) return [];
    return [
      {
        blockNumber: d.blockNumber,
        blockHash: d.blockHash,
        incoming,
        outgoing,
        transfer: {
          txHash: d.txHash,
          logIndex: d.logIndex,
          token: token.symbol,
          tokenContract: token.address,
          from,
          to,
          amount: d.amount,
        },
      },
    ];
  }
}

type Match =
  | { blockNumber: bigint; blockHash: string; incoming: boolean; outgoing: boolean; transfer: Omit<ObservedTransfer, 'block'> }
  | { blockNumber: bigint; blockHash: string; unsupported: Omit<UnsupportedTransfer, 'block'> };

const chainOrder = (a: Pick<ObservedTransfer, 'block' | 'logIndex'>, b: Pick<ObservedTransfer, 'block' | 'logIndex'>): number =>
  a.block.height === b.block.height ? a.logIndex - b.logIndex : a.block.height < b.block.height ? -1 : 1;
const minBig = (a: bigint, b: bigint): bigint => (a < b ? a : b);
