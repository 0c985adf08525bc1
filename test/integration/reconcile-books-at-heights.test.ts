import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXTERNAL_ACCOUNT, addressAccount, journalAsset, transferLegs } from '../../src/ledger/journal/accounts.js';
import { journalBalancesAt } from '../../src/ledger/journal/balances.js';
import { recordMovements } from '../../src/ledger/journal/entries.js';
import { booksAtHeights } from '../../src/reconcile/final-state.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

// The books of balances read at different heights (src/reconcile/final-state.ts, docs/journal.md "Reconcile"): each
// balance counts the journal entries at or below its own height; a balance whose height is only known as a range
// (TRON, the solidified block moved during its read) is ambiguous exactly when its books change within that range.

const chain = { network: 'tron', mode: 'test' as const };
const USDT = journalAsset('tron', 'test', 'USDT');
const A = '41aaaa';
const B = '41bbbb';
let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase();
  const deposit = (tx: string, to: string, height: bigint, amount: bigint, kind: 'deposit' | 'unexplained' = 'deposit') => ({
    ...chain,
    txHash: tx,
    legKey: 'log:0',
    kind,
    blockHeight: height,
    legs: transferLegs(USDT, EXTERNAL_ACCOUNT, addressAccount('tron', 'test', to), amount),
  });
  await tdb.db
    .transaction()
    .execute((trx) =>
      recordMovements(trx, [
        deposit('t10', A, 10n, 1_000n),
        deposit('t20', A, 20n, 500n),
        deposit('t30', B, 30n, 7n, 'unexplained'),
        deposit('t40', A, 40n, 3n),
      ]),
    );
}, 120_000);
afterAll(async () => {
  await tdb?.destroy();
});

describe('booksAtHeights', () => {
  it('counts for each balance the entries at or below its own height', async () => {
    const pinned = 15n;
    const atPinned = await journalBalancesAt(tdb.db, chain, pinned);
    const queries = [
      { address: A, asset: 'USDT' as const },
      { address: A, asset: 'USDT' as const },
      { address: B, asset: 'USDT' as const },
      { address: A, asset: 'USDT' as const },
    ];
    const books = await booksAtHeights(tdb.db, chain, pinned, atPinned, queries, [15n, 25n, 35n, 5n]);
    expect(books).toEqual([
      { balance: 1_000n, unexplained: 0n, ambiguous: false },
      { balance: 1_500n, unexplained: 0n, ambiguous: false },
      { balance: 7n, unexplained: 7n, ambiguous: false },
      { balance: 0n, unexplained: 0n, ambiguous: false },
    ]);
  });

  it('marks a balance read somewhere in a height range ambiguous only when its books change within it', async () => {
    const atPinned = await journalBalancesAt(tdb.db, chain, 25n);
    const q = [{ address: A, asset: 'USDT' as const }];
    // Read between 21 and 35: nothing of A's moved there, the books are 1,500 whichever block answered.
    expect(await booksAtHeights(tdb.db, chain, 25n, atPinned, q, [35n], [21n])).toEqual([
      { balance: 1_500n, unexplained: 0n, ambiguous: false },
    ]);
    // Read between 15 and 25: the 500 at block 20 may or may not be in the balance read.
    expect(await booksAtHeights(tdb.db, chain, 25n, atPinned, q, [25n], [15n])).toEqual([
      { balance: 1_500n, unexplained: 0n, ambiguous: true },
    ]);
    // Between 20 and 40: block 20 is at the low end (in the state whichever answered), block 40 is not.
    expect(await booksAtHeights(tdb.db, chain, 25n, atPinned, q, [40n], [20n])).toEqual([
      { balance: 1_503n, unexplained: 0n, ambiguous: true },
    ]);
    expect(await booksAtHeights(tdb.db, chain, 25n, atPinned, q, [39n], [20n])).toEqual([
      { balance: 1_500n, unexplained: 0n, ambiguous: false },
    ]);
  });
});
