import { isBalanceReader, isFinalStateReader, type BalanceQuery, type ChainAdapter } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { journalBalancesAt } from '../ledger/journal/balances.js';
import { addressesWithTransfersInFlight, bookOpeningBalances, registeredWallets } from '../ledger/journal/native-balances.js';
import { booksAtHeights, waitForWatcher } from './final-state.js';

// Opening balances of registered wallets on chains that keep no state by height (TRON, Solana; docs/journal.md
// "Native balances"). The balance at the registration height can only be read while it is the latest final state, so
// the command that registers wallets for funding (`payouts wallets`) books their opening right away: the exact final
// state at or above the registration height, minus the journal at that height. Whatever moves after it is then an
// unexplained movement, as on EVM. Reconcile books the openings this did not (from its own exact read).

/**
 * Books the opening balance of every registered wallet of `adapter`'s chain still without one, from a final state read
 * at or above its registration height, once the watcher covers that height. Waits at most `waitMs` in all; answers the
 * wallets booked (none on EVM, whose openings reconcile reads at the registration block itself).
 */
export async function openRegisteredWallets(db: Db, adapter: ChainAdapter, waitMs: number): Promise<string[]> {
  if (!isBalanceReader(adapter) || !isFinalStateReader(adapter)) return [];
  const chain = { network: adapter.network, mode: adapter.mode };
  const until = Date.now() + waitMs;
  const wallets = (await registeredWallets(db, chain)).filter((w) => w.needsOpening);
  const inFlight = await addressesWithTransfersInFlight(
    db,
    chain,
    wallets.map((w) => w.address),
  );
  const pending = wallets.filter((w) => !inFlight.has(w.address));
  if (pending.length === 0) return [];
  const minHeight = pending.reduce((a, w) => (w.openingHeight !== null && w.openingHeight > a ? w.openingHeight : a), 0n);
  const assets = [...adapter.tokens.map((t) => t.symbol), 'native' as const];
  const queries: BalanceQuery[] = pending.flatMap((w) => assets.map((asset) => ({ address: w.address, asset })));
  for (;;) {
    // The latest final state (no minimum: a node not there yet would answer an error), read again until it reaches
    // the registrations at one exact height; a failing read gives up at once (reconcile books the openings then).
    const read = await adapter.finalStateBalances(0n, queries).catch(() => null);
    if (!read) return [];
    const h = read.heights[0];
    const exact = read.heights.every((x, i) => x === h && (read.lowHeights?.[i] ?? x) === h);
    if (h !== undefined && h >= minHeight && exact) {
      if ((await waitForWatcher(db, chain, h, Math.max(0, until - Date.now()))) === null) return [];
      const books = await booksAtHeights(db, chain, h, await journalBalancesAt(db, chain, h), queries, read.heights);
      await bookOpeningBalances(
        db,
        chain,
        pending.map((w) => ({
          address: w.address,
          merchantId: w.merchantId,
          height: h,
          balances: queries.flatMap((q, i) =>
            q.address === w.address ? [{ asset: q.asset, amount: read.balances[i]! - books[i]!.balance }] : [],
          ),
        })),
      );
      return pending.map((w) => w.address);
    }
    if (Date.now() >= until) return [];
    await new Promise((r) => setTimeout(r, 250));
  }
}
