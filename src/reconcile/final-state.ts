import { isFinalStateReader, type BalanceQuery, type BalanceReader, type ChainAdapter, type FinalStateRead } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import type { Mode } from '../domain/vocabulary.js';
import { accountAddress, assetPrefix, journalBalancesAt, journalLegsBetween, type JournalBalance } from '../ledger/journal.js';
import { watcherFinalHeight } from '../ledger/reconcile-runs.js';

// Balances read at a known height, and the books at that same height (docs/journal.md, "Reconcile"). EVM keeps state by
// block: everything is read at the pinned height. TRON and Solana serve only their latest final state: each balance
// comes with the height whose state it is (FinalStateReader), and the books of that balance are computed at that height,
// once the watcher's committed final height covers it.

export type Chain = { network: string; mode: Mode };

/** Reads `queries` at `pinned` (EVM) or in the latest final state, no older than `pinned` (TRON, Solana). */
export async function readBalances(
  adapter: ChainAdapter & BalanceReader,
  pinned: bigint,
  queries: readonly BalanceQuery[],
): Promise<FinalStateRead & { exact: 'block' | 'final-state' }> {
  if (isFinalStateReader(adapter)) return { ...(await adapter.finalStateBalances(pinned, queries)), exact: 'final-state' };
  return { balances: await adapter.balancesAt(pinned, queries), heights: queries.map(() => pinned), retries: 0, exact: 'block' };
}

/**
 * Waits (polling every `pollMs`, at most `waitMs`) until the watcher's committed final height of `chain` reaches
 * `height`: every movement the journal can hold up to it is then recorded. Answers the committed height, or null on
 * timeout.
 */
export async function waitForWatcher(db: Db, chain: Chain, height: bigint, waitMs: number, pollMs = 250): Promise<bigint | null> {
  const until = Date.now() + waitMs;
  for (;;) {
    const committed = await watcherFinalHeight(db, chain);
    if (committed !== null && committed >= height) return committed;
    if (Date.now() >= until) return null;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

export type Books = { balance: bigint; unexplained: bigint };

const key = (address: string, asset: string) => `${address}\u0000${asset}`;

/**
 * The books of each query at its own height (`heights[i]`): the journal balance of that address and asset counting
 * entries at or below it, and the unacknowledged unexplained part. `atPinned` is journalBalancesAt(`pinned`), reused
 * when no height is below it.
 */
export async function booksAtHeights(
  db: Db,
  chain: Chain,
  pinned: bigint,
  atPinned: readonly JournalBalance[],
  queries: readonly BalanceQuery[],
  heights: readonly bigint[],
): Promise<Books[]> {
  let low = pinned;
  let high = pinned;
  for (const h of heights) {
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
    const b = { ...(byKey.get(k) ?? { balance: 0n, unexplained: 0n }) };
    for (const l of later.get(k) ?? []) {
      if (l.height > heights[i]!) continue;
      b.balance += l.balance;
      b.unexplained += l.unexplained;
    }
    return b;
  });
}
