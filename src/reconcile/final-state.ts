import { isFinalStateReader, type BalanceQuery, type BalanceReader, type ChainAdapter, type FinalStateRead } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import type { Mode } from '../../chains/vocabulary.js';
import { accountAddress, assetPrefix } from '../ledger/journal/accounts.js';
import { journalBalancesAt, journalLegsBetween, type JournalBalance } from '../ledger/journal/balances.js';
import { watcherFinalHeight } from '../ledger/journal/reconcile-runs.js';

// Balances read at a known height, and the books at that same height (docs/journal.md, "Reconcile"). EVM keeps state by
// block: everything is read at the pinned height. TRON and Solana serve only their latest final state: each balance
// comes with the height whose state it is (FinalStateReader), and the books of that balance are computed at that height,
// once the watcher's committed final height covers it.

export type Chain = { network: string; mode: Mode };

/** How long a final state read waits for the node to reach the floor height. */
const FLOOR_WAIT_MS = 60_000;

/**
 * Reads `queries` at `pinned` (EVM) or in the latest final state, no older than `floor` (TRON, Solana: the previous
 * run's height, so that a movement this chain's previous run booked at its height is never read again from an older
 * state and booked twice; the state may be below `pinned`, whose books booksAtHeights computes at its own height).
 */
export async function readBalances(
  adapter: ChainAdapter & BalanceReader,
  pinned: bigint,
  queries: readonly BalanceQuery[],
  floor: bigint = pinned,
): Promise<FinalStateRead & { exact: 'block' | 'final-state' }> {
  if (isFinalStateReader(adapter)) {
    // TRON's solidified block has no minimum to ask for: a node behind the floor is read again, for a while.
    for (const until = Date.now() + FLOOR_WAIT_MS; ; ) {
      const read = await adapter.finalStateBalances(floor, queries);
      if (read.heights.every((h) => h >= floor)) return { ...read, exact: 'final-state' };
      if (Date.now() >= until) throw new Error(`${adapter.network}: the final state stayed below height ${floor}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  return { balances: await adapter.balancesAt(pinned, queries), heights: queries.map(() => pinned), retries: 0, exact: 'block' };
}

/**
 * Waits (polling every `pollMs`, at most `waitMs`) until the watcher's committed final height of `chain` reaches
 * `height`: every movement the journal can hold up to it is then recorded. Answers the committed height, or null on
 * timeout or when the watcher never ran on the chain.
 */
export async function waitForWatcher(db: Db, chain: Chain, height: bigint, waitMs: number, pollMs = 250): Promise<bigint | null> {
  const until = Date.now() + waitMs;
  for (;;) {
    const committed = await watcherFinalHeight(db, chain);
    if (committed === null) return null;
    if (committed >= height) return committed;
    if (Date.now() >= until) return null;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

export type Books = { balance: bigint; unexplained: bigint };

const key = (address: string, asset: string) => `${address}\u0000${asset}`;

/**
 * The books of each query at its own height (`heights[i]`): the journal balance of that address and asset counting
 * entries at or below it, and the unacknowledged unexplained part. `atPinned` is journalBalancesAt(`pinned`), reused
 * when no height is below it. With `lowHeights` (a balance whose height is only known to lie in a range), `ambiguous`
 * says where the books differ within that range: the comparison would depend on which height answered.
 */
export async function booksAtHeights(
  db: Db,
  chain: Chain,
  pinned: bigint,
  atPinned: readonly JournalBalance[],
  queries: readonly BalanceQuery[],
  heights: readonly bigint[],
  lowHeights: readonly bigint[] = heights,
): Promise<Array<Books & { ambiguous: boolean }>> {
  let low = pinned;
  let high = pinned;
  for (const h of [...heights, ...lowHeights]) {
    if (h < low) low = h;
    if (h > high) high = h;
  }
  const base = low === pinned ? atPinned : await journalBalancesAt(db, chain, low);
  const byKey = new Map<string, Books>();
  const prefix = assetPrefix(chain).length;
  for (const j of base) {
    const address = accountAddress(chain, j.account);
    if (address !== null) byKey.set(key(address, j.asset.slice(prefix)), { balance: j.balance, unexplained: j.unexplained });
  }
  const later = new Map<string, Array<{ height: bigint } & Books>>();
  for (const l of await journalLegsBetween(db, chain, low, high)) {
    const address = accountAddress(chain, l.account);
    if (address === null) continue;
    const k = key(address, l.asset.slice(prefix));
    later.set(k, [...(later.get(k) ?? []), { height: l.height, balance: l.balance, unexplained: l.unexplained }]);
  }
  return queries.map((q, i) => {
    const k = key(q.address, q.asset);
    const b = { ...(byKey.get(k) ?? { balance: 0n, unexplained: 0n }), ambiguous: false };
    for (const l of later.get(k) ?? []) {
      if (l.height > heights[i]!) continue;
      b.balance += l.balance;
      b.unexplained += l.unexplained;
      if (l.height > lowHeights[i]! && (l.balance !== 0n || l.unexplained !== 0n)) b.ambiguous = true;
    }
    return b;
  });
}

/** Reads of balances whose height stayed ambiguous, before they are left uncompared for this run. */
const REREADS = 3;

export interface SettledRead {
  balances: bigint[];
  heights: bigint[];
  books: Array<Books & { ambiguous: boolean }>;
  exact: 'block' | 'final-state';
  /** Chunk re-reads inside the adapter plus the balances read again here. */
  retries: number;
}

/**
 * Reads `queries` (readBalances), waits for the watcher to cover the highest height read, and computes the books of
 * each balance at its height. A balance whose height is a range over which its books change (TRON, the solidified
 * block moved during its read) is read again, at most REREADS times; still ambiguous, its `books.ambiguous` stays true
 * and reconcile leaves it uncompared. Null: the watcher did not cover the read within `waitMs`.
 */
export async function readSettled(
  db: Db,
  adapter: ChainAdapter & BalanceReader,
  chain: Chain,
  pinned: bigint,
  committed: bigint,
  atPinned: readonly JournalBalance[],
  queries: readonly BalanceQuery[],
  waitMs: number,
  floor: bigint = pinned,
): Promise<SettledRead | null> {
  const first = await readBalances(adapter, pinned, queries, floor);
  const balances = [...first.balances];
  const heights = [...first.heights];
  const lows = [...(first.lowHeights ?? first.heights)];
  let retries = first.retries;
  let covered = committed;
  for (let round = 0; ; round++) {
    const top = heights.reduce((a, h) => (h > a ? h : a), floor);
    if (top > covered) {
      const c = await waitForWatcher(db, chain, top, waitMs);
      if (c === null) return null;
      covered = c;
    }
    const books = await booksAtHeights(db, chain, pinned, atPinned, queries, heights, lows);
    const ambiguous = books.flatMap((b, i) => (b.ambiguous ? [i] : []));
    if (ambiguous.length === 0 || round === REREADS) return { balances, heights, books, exact: first.exact, retries };
    const again = await readBalances(
      adapter,
      pinned,
      ambiguous.map((i) => queries[i]!),
      floor,
    );
    retries += again.retries + ambiguous.length;
    ambiguous.forEach((i, j) => {
      balances[i] = again.balances[j]!;
      heights[i] = again.heights[j]!;
      lows[i] = (again.lowHeights ?? again.heights)[j]!;
    });
  }
}
