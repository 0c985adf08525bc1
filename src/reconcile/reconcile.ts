import type { ChainRegistry } from '../../chains/chain-registry.js';
import {
  isBalanceReader,
  isFinalStateReader,
  type BalanceQuery,
  type BalanceReader,
  type ChainAdapter,
  type TokenSymbol,
} from '../../chains/types.js';
import type { Db } from '../db/database.js';
import type { Mode } from '../../chains/vocabulary.js';
import { accountAddress, addressAccount, journalAsset } from '../ledger/journal/accounts.js';
import { journalBalancesAt } from '../ledger/journal/balances.js';
import {
  addressesWithTransfersInFlight,
  bookOpeningBalances,
  depositSessions,
  lastRunHeight,
  recordUnexplainedNative,
  registeredWallets,
  type RegisteredWallet,
} from '../ledger/journal/native-balances.js';
import {
  addressMerchants,
  claimReconcileSlot,
  storeReconcileRun,
  watcherFinalHeight,
  withReconcileLock,
} from '../ledger/journal/reconcile-runs.js';
import { reconciliationDifference, reconciliationLastRun } from '../metrics/reconcile.js';
import { countUnexplained } from '../metrics/watcher.js';
import { ChainReadError, guardedReads } from './chain-reads.js';
import { readSettled, type Books } from './final-state.js';

// Reconciliation (docs/journal.md): for every address of a chain with journal activity, the books (journal balance
// at a pinned final height, minus unexplained movements no operator acknowledged) against the chain's balance at that
// same height, to the base unit, for each registry token and the native coin. Pinned height: the lower of the
// watcher's committed final height and the chain's current final height, so every movement the journal can hold for
// it is already final and recorded. EVM reads at that block; TRON and Solana serve only their latest final state, read
// with the height of that state, and the books are computed at that height once the watcher covers it
// (final-state.ts). Every difference fails the run. Native coin: registered wallets get their opening
// balance booked once, and a native balance that differs from the journal while nothing of ours is in flight from that
// address is booked as an unexplained movement (flagged until an operator acknowledges it), since gas arrives as plain
// value transfers no log shows (docs/journal.md).

export interface ReconcileDifference {
  address: string;
  /** Token symbol or `native`. */
  asset: TokenSymbol | 'native';
  merchantId: string | null;
  /** Journal balance (every entry at or below the height). */
  journal: bigint;
  /** Unacknowledged unexplained movements inside `journal`. */
  unexplained: bigint;
  /** The books: journal minus unexplained. */
  expected: bigint;
  chain: bigint;
  /** expected − chain (ledger minus on-chain). */
  difference: bigint;
  /**
   * Whether this difference fails the run: every token difference, and every native one except on an address with a
   * transaction of ours in flight (`inFlight`).
   */
  failing: boolean;
  /**
   * A native difference on an address that sent a transaction of ours not settled yet (signed or broadcast): its fee
   * may be on chain before the journal has it, so the balance is not compared this run (exit 4, "not compared"), not
   * booked as unexplained, not stored as a difference; a later run compares it.
   */
  inFlight?: true;
}

export interface ReconcileSummaryRow {
  merchantId: string | null;
  asset: TokenSymbol | 'native';
  addresses: number;
  expected: bigint;
  chain: bigint;
  difference: bigint;
}

export interface ChainReconciliation {
  network: string;
  mode: Mode;
  /** Null when the chain was skipped (`skipped` says why). */
  height: bigint | null;
  skipped?: string;
  /** The skip is the scheduled runs' coordination (another worker took the slot, or a run of the chain is in progress), not a gap. */
  coordinated?: true;
  runId?: bigint;
  addresses: number;
  balances: number;
  rpcCalls: number;
  durationMs: number;
  differences: ReconcileDifference[];
  summary: ReconcileSummaryRow[];
  /**
   * TRON and Solana (final state read, no state by height): the lowest and highest heights whose state the balances
   * are (each compared with the books at its own height; `height` is the highest), the reads repeated because the
   * final state moved during them, and the balances left uncompared this run (their height stayed a range over which
   * their books change: TRON, the solidified block moving during every read of them).
   */
  stateHeights?: { lowest: bigint; highest: bigint; retries: number; uncompared: number };
  /** Unexplained native movements this run booked (on-chain minus journal; docs/journal.md "Native balances"). */
  unexplainedNative?: Array<{ entryId: bigint; address: string; amount: bigint; merchantId: string | null }>;
}

export interface ReconcileReport {
  chains: ChainReconciliation[];
  /** True when no token balance differs on any chain. */
  ok: boolean;
}

/**
 * Reconciles every configured chain (or the one named), each under its reconcile lock (a PostgreSQL advisory lock):
 * runs of one chain never overlap. `scheduled` (the worker role's timer, in every worker process, ticking at the same
 * slot boundaries): each chain's `slot` is claimed in the ledger first, and a chain whose slot another worker claimed is
 * skipped, so the workers store one run per slot between them; so is a chain another run (the CLI's, or a scheduled one
 * still going) holds the lock of. Without it (the CLI) the run waits for the lock and always runs.
 */
export async function reconcile(
  deps: { db: Db; adapters: ChainRegistry },
  opts: { network?: string; mode?: Mode; scheduled?: { slot: bigint }; coverWaitMs?: number } = {},
): Promise<ReconcileReport> {
  const chains: ChainReconciliation[] = [];
  for (const adapter of deps.adapters) {
    if (opts.network && adapter.network !== opts.network) continue;
    if (opts.mode && adapter.mode !== opts.mode) continue;
    const chain = { network: adapter.network, mode: adapter.mode };
    const skipped = (why: string): ChainReconciliation => ({
      ...chain,
      height: null,
      skipped: why,
      coordinated: true,
      addresses: 0,
      balances: 0,
      rpcCalls: 0,
      durationMs: 0,
      differences: [],
      summary: [],
    });
    if (opts.scheduled && !(await claimReconcileSlot(deps.db, chain, opts.scheduled.slot))) {
      chains.push(skipped('another worker took this slot'));
      continue;
    }
    const r = await withReconcileLock(deps.db, chain, !opts.scheduled, () =>
      reconcileChain(deps.db, adapter, { coverWaitMs: opts.coverWaitMs }),
    );
    chains.push('busy' in r ? skipped('another run of this chain is in progress') : r);
  }
  return { chains, ok: chains.every((c) => c.differences.every((d) => !d.failing)) };
}

/** What a chain's run left uncompared: the chain itself (skipped, with the reason) or some of its balances. */
export function incompleteness(c: ChainReconciliation): string[] {
  if (c.skipped) return [`skipped (${c.skipped})`];
  const uncompared = c.stateHeights?.uncompared ?? 0;
  const gaps = uncompared > 0 ? [`${uncompared} balances left uncompared (the final state moved during every read of them)`] : [];
  for (const d of c.differences)
    if (d.inFlight)
      gaps.push(
        `${d.address} native: a transaction of ours from it is in flight (its fee may not be journaled yet; compared on a later run)`,
      );
  return gaps;
}

/** How long a run waits for the watcher to cover the height of a final state read (TRON, Solana) before skipping. */
export const DEFAULT_COVER_WAIT_MS = 120_000;

/**
 * Reconciles one chain. A chain read that fails (the node timed out, refused the connection, answered an error) leaves
 * the chain uncompared with the reason (`node unreachable: ...`); nothing of the run is stored.
 */
export async function reconcileChain(db: Db, adapter: ChainAdapter, opts: { coverWaitMs?: number } = {}): Promise<ChainReconciliation> {
  try {
    return await compareChain(db, guardedReads(adapter), opts);
  } catch (e) {
    if (!(e instanceof ChainReadError)) throw e;
    const chain = { network: adapter.network, mode: adapter.mode };
    return {
      ...chain,
      height: null,
      skipped: `node unreachable: ${e.message}`,
      addresses: 0,
      balances: 0,
      rpcCalls: 0,
      durationMs: 0,
      differences: [],
      summary: [],
    };
  }
}

async function compareChain(db: Db, adapter: ChainAdapter, opts: { coverWaitMs?: number }): Promise<ChainReconciliation> {
  const chain = { network: adapter.network, mode: adapter.mode };
  const empty = { ...chain, addresses: 0, balances: 0, rpcCalls: 0, durationMs: 0, differences: [], summary: [] };
  if (!isBalanceReader(adapter))
    return { ...empty, height: null, skipped: 'balance reads at a height are not implemented for this network yet' };
  const startedAt = new Date();
  const t0 = performance.now();
  const calls0 = adapter.balanceRpcCalls;
  const committed = await watcherFinalHeight(db, chain);
  if (committed === null) return { ...empty, height: null, skipped: 'the watcher has not run on this chain yet' };
  const head = await adapter.getHead();
  const pinned = committed < head.final ? committed : head.final;

  const assets: Array<TokenSymbol | 'native'> = [...adapter.tokens.map((t) => t.symbol), 'native'];
  const wallets = await registeredWallets(db, chain);
  await bookHistoricalOpenings(db, adapter, pinned, assets, wallets);
  const journal = await journalBalancesAt(db, chain, pinned);
  const addresses = new Set<string>(wallets.map((w) => w.address));
  for (const j of journal) {
    const address = accountAddress(chain, j.account);
    if (address !== null) addresses.add(address);
  }
  const list = [...addresses];
  const queries: BalanceQuery[] = list.flatMap((address) => assets.map((asset) => ({ address, asset })));
  // EVM: every balance at the pinned block. TRON and Solana: the latest final state, each balance with its height, the
  // books at that height once the watcher covers it.
  const waitMs = opts.coverWaitMs ?? DEFAULT_COVER_WAIT_MS;
  // The floor of a final state read is the previous run's height only (a movement it booked there is never read again
  // from an older state): not the pinned height, which a CONFIRMATIONS shallower than the node's solidification puts
  // above the state the node serves; a chain or solidity node that stopped would never reach it (the run waited
  // FLOOR_WAIT_MS and threw). Books are computed at each balance's own height, below the pinned one too.
  const previous = await lastRunHeight(db, chain);
  const floor = isFinalStateReader(adapter) ? (previous ?? 0n) : pinned;
  const read = await readSettled(db, adapter, chain, pinned, committed, journal, queries, waitMs, floor);
  if (read === null)
    return {
      ...empty,
      height: null,
      skipped: `the watcher's committed final height stayed below the height of the final state read for ${waitMs} ms`,
    };
  const onChain = read.balances;
  const books = read.books;
  const top = read.heights.length === 0 ? floor : read.heights.reduce((a, h) => (h > a ? h : a), read.heights[0]!);
  const lowest = read.heights.reduce((a, h) => (h < a ? h : a), top);
  const uncompared = books.filter((b) => b.ambiguous).length;
  const merchants = await addressMerchants(db, chain, list);
  if (read.exact === 'final-state') await bookOpeningsFromRead(db, chain, wallets, queries, read, books);
  const { unexplained: unexplainedNative, inFlight } = await recordNativeDrift(db, chain, queries, onChain, read.heights, books, merchants);
  for (const u of unexplainedNative) countUnexplained(chain, u.amount > 0n ? 'in' : 'out');

  const differences: ReconcileDifference[] = [];
  const summary = new Map<string, ReconcileSummaryRow & { seen: Set<string> }>();
  queries.forEach((q, i) => {
    const j = books[i]!;
    if (j.ambiguous) return;
    const expected = j.balance - j.unexplained;
    const actual = onChain[i]!;
    const merchantId = merchants.get(q.address) ?? null;
    const key = `${merchantId ?? ''}\u0000${q.asset}`;
    let s = summary.get(key);
    if (!s) summary.set(key, (s = { merchantId, asset: q.asset, addresses: 0, expected: 0n, chain: 0n, difference: 0n, seen: new Set() }));
    if (!s.seen.has(q.address)) {
      s.seen.add(q.address);
      s.addresses++;
    }
    s.expected += expected;
    s.chain += actual;
    s.difference += expected - actual;
    if (expected !== actual) {
      const waiting = q.asset === 'native' && inFlight.has(q.address);
      differences.push({
        address: q.address,
        asset: q.asset,
        merchantId,
        journal: j.balance,
        unexplained: j.unexplained,
        expected,
        chain: actual,
        difference: expected - actual,
        failing: !waiting,
        ...(waiting ? { inFlight: true as const } : {}),
      });
    }
  });
  const durationMs = performance.now() - t0;
  const rpcCalls = adapter.balanceRpcCalls - calls0;
  const runId = await storeReconcileRun(db, {
    chain,
    height: top,
    addresses: list.length,
    balances: queries.length,
    rpcCalls,
    durationMs,
    startedAt,
    differences: differences
      .filter((d) => d.failing)
      .map((d) => ({
        account: addressAccount(chain.network, chain.mode, d.address),
        asset: journalAsset(chain.network, chain.mode, d.asset),
        merchantId: d.merchantId,
        journal: d.journal,
        chain: d.chain,
        difference: d.difference,
        unexplained: d.unexplained,
      })),
  });
  for (const t of adapter.tokens) {
    const total = differences.filter((d) => d.asset === t.symbol).reduce((a, d) => a + d.difference, 0n);
    reconciliationDifference.set({ ...chain, token: t.symbol }, Number(total) / 10 ** t.decimals);
  }
  reconciliationLastRun.set(chain, Date.now() / 1000);
  return {
    ...chain,
    height: top,
    ...(read.exact === 'final-state' ? { stateHeights: { lowest, highest: top, retries: read.retries, uncompared } } : {}),
    runId,
    addresses: list.length,
    balances: queries.length,
    rpcCalls,
    durationMs,
    differences,
    summary: [...summary.values()].map(({ seen: _seen, ...row }) => row),
    unexplainedNative,
  };
}

/**
 * EVM keeps state by block: books the opening balance of each registered wallet that has none yet, read at its
 * opening height (its registration), once the pinned height reaches it. TRON and Solana: bookOpeningsFromRead.
 */
async function bookHistoricalOpenings(
  db: Db,
  adapter: ChainAdapter & BalanceReader,
  height: bigint,
  assets: ReadonlyArray<TokenSymbol | 'native'>,
  wallets: readonly RegisteredWallet[],
): Promise<void> {
  if (isFinalStateReader(adapter)) return;
  const chain = { network: adapter.network, mode: adapter.mode };
  const pending = wallets.filter((w) => w.needsOpening && (w.openingHeight === null || w.openingHeight <= height));
  if (pending.length === 0) return;
  const byHeight = new Map<bigint, RegisteredWallet[]>();
  for (const w of pending) {
    const h = w.openingHeight ?? height;
    byHeight.set(h, [...(byHeight.get(h) ?? []), w]);
  }
  const openings: Opening[] = [];
  for (const [h, ws] of byHeight) {
    const queries = ws.flatMap((w) => assets.map((asset) => ({ address: w.address, asset })));
    const read = await adapter.balancesAt(h, queries);
    for (const w of ws)
      openings.push({
        address: w.address,
        merchantId: w.merchantId,
        height: h,
        balances: assets.map((asset) => ({ asset, amount: read[queries.findIndex((q) => q.address === w.address && q.asset === asset)]! })),
      });
  }
  await bookOpeningBalances(db, chain, openings);
}

type Opening = { address: string; merchantId: string | null; height: bigint; balances: Array<{ asset: string; amount: bigint }> };

/**
 * TRON and Solana: the opening balance of each registered wallet that has none yet, from this run's exact read of the
 * final state at height h (at or after its registration): what the chain held at h minus the journal at h, booked at h.
 * A wallet whose balances came from different heights, or with a transaction of ours in flight (its landed fee may not
 * be journaled yet), waits for a later run. Updates `books` with what was booked.
 */
async function bookOpeningsFromRead(
  db: Db,
  chain: { network: string; mode: Mode },
  wallets: readonly RegisteredWallet[],
  queries: readonly BalanceQuery[],
  read: { balances: readonly bigint[]; heights: readonly bigint[] },
  books: Array<Books & { ambiguous: boolean }>,
): Promise<void> {
  const pending = wallets.filter((w) => w.needsOpening);
  if (pending.length === 0) return;
  const inFlight = await addressesWithTransfersInFlight(
    db,
    chain,
    pending.map((w) => w.address),
  );
  const openings: Opening[] = [];
  const touched: number[] = [];
  for (const w of pending) {
    if (inFlight.has(w.address)) continue;
    const idx = queries.flatMap((q, i) => (q.address === w.address ? [i] : []));
    const h = read.heights[idx[0]!]!;
    if (idx.some((i) => read.heights[i] !== h || books[i]!.ambiguous)) continue;
    if (w.openingHeight !== null && w.openingHeight > h) continue;
    openings.push({
      address: w.address,
      merchantId: w.merchantId,
      height: h,
      balances: idx.map((i) => ({ asset: queries[i]!.asset, amount: read.balances[i]! - books[i]!.balance })),
    });
    touched.push(...idx);
  }
  await bookOpeningBalances(db, chain, openings);
  for (const i of touched) books[i] = { ...books[i]!, balance: read.balances[i]! };
}

/**
 * Native balances that differ from the books at their height, on addresses with nothing of ours in flight: booked as
 * unexplained movements at that height (the books, which leave unacknowledged ones out, still differ until an
 * operator acknowledges them). Updates `books` with what was written. Returns those movements and the drifting
 * addresses left alone because a transaction of ours from them is in flight.
 */
async function recordNativeDrift(
  db: Db,
  chain: { network: string; mode: Mode },
  queries: readonly BalanceQuery[],
  onChain: readonly bigint[],
  heights: readonly bigint[],
  books: Array<Books & { ambiguous: boolean }>,
  merchants: ReadonlyMap<string, string>,
): Promise<{
  unexplained: Array<{ entryId: bigint; address: string; amount: bigint; merchantId: string | null }>;
  inFlight: ReadonlySet<string>;
}> {
  const drifting = queries.flatMap((q, i) => (q.asset === 'native' && !books[i]!.ambiguous && onChain[i] !== books[i]!.balance ? [i] : []));
  if (drifting.length === 0) return { unexplained: [], inFlight: new Set() };
  const inFlight = await addressesWithTransfersInFlight(
    db,
    chain,
    drifting.map((i) => queries[i]!.address),
  );
  const settled = drifting.filter((i) => !inFlight.has(queries[i]!.address));
  const sessions = await depositSessions(
    db,
    chain,
    settled.map((i) => queries[i]!.address),
  );
  const from = await lastRunHeight(db, chain);
  const byHeight = new Map<bigint, number[]>();
  for (const i of settled) byHeight.set(heights[i]!, [...(byHeight.get(heights[i]!) ?? []), i]);
  const out: Array<{ entryId: bigint; address: string; amount: bigint; merchantId: string | null }> = [];
  for (const [height, idx] of byHeight) {
    const byAddress = new Map(idx.map((i) => [queries[i]!.address, i]));
    const written = await recordUnexplainedNative(
      db,
      chain,
      from,
      height,
      idx.map((i) => ({
        address: queries[i]!.address,
        merchantId: merchants.get(queries[i]!.address) ?? null,
        sessionId: sessions.get(queries[i]!.address) ?? null,
        amount: onChain[i]! - books[i]!.balance,
      })),
    );
    for (const w of written) {
      const i = byAddress.get(w.drift.address)!;
      books[i] = { ...books[i]!, balance: books[i]!.balance + w.drift.amount, unexplained: books[i]!.unexplained + w.drift.amount };
      out.push({ entryId: w.entryId, address: w.drift.address, amount: w.drift.amount, merchantId: w.drift.merchantId });
    }
  }
  return { unexplained: out, inFlight };
}
