import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXTERNAL_ACCOUNT, addressAccount, journalAsset, transferLegs, type Movement } from '../../src/ledger/journal/accounts.js';
import { recordMovements, reverseObservedAbove } from '../../src/ledger/journal/entries.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

// The journal's writer on the watcher's path (docs/journal.md, docs/performance.md "Journal cost"): a batch of new
// movements is written, entries and legs, by one statement; recording again writes nothing; a movement reversed by a
// reorg and seen again gets the next revision; the database refuses legs that name no entry or leave one unbalanced,
// and refuses TRUNCATE, like update and delete.

const chain = { network: 'ethereum', mode: 'test' as const };
const USDT = journalAsset('ethereum', 'test', 'USDT');
let tdb: TestDatabase;
const counter = { on: false, queries: 0 };
const original = pg.Client.prototype.query;

beforeAll(async () => {
  tdb = await createTestDatabase();
  pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
    if (counter.on) counter.queries++;
    return (original as (...x: unknown[]) => unknown).apply(this, a);
  } as typeof original;
}, 120_000);
afterAll(async () => {
  pg.Client.prototype.query = original;
  await tdb?.destroy();
});

const deposit = (tx: string, log: number, height: bigint, amount: bigint): Movement => ({
  ...chain,
  txHash: tx,
  legKey: `log:${log}`,
  kind: 'deposit',
  blockHeight: height,
  blockHash: `0xblock${height}`,
  merchantId: 'mch_x',
  sessionId: `cs_${log}`,
  object: { type: 'deposit', id: `dep_${tx}_${log}` },
  legs: transferLegs(USDT, EXTERNAL_ACCOUNT, addressAccount('ethereum', 'test', `0xaddr${log}`), amount),
});

/** recordMovements in its own transaction, with the number of statements it sent. */
async function record(movements: Movement[]) {
  return tdb.db.transaction().execute(async (trx) => {
    counter.queries = 0;
    counter.on = true;
    try {
      const written = await recordMovements(trx, movements);
      return { written, queries: counter.queries };
    } finally {
      counter.on = false;
    }
  });
}

async function entriesOf(tx: string) {
  return (
    await sql<{ id: string; leg_key: string; revision: number; reverses_id: string | null; legs: string }>`
      select e.id::text, e.leg_key, e.revision, e.reverses_id::text,
             string_agg(l.account || ' ' || l.asset || ' ' || l.amount::text, ', ' order by l.amount) as legs
      from journal_entries e join journal_legs l on l.entry_id = e.id
      where e.tx_hash = ${tx} group by e.id order by e.id`.execute(tdb.db)
  ).rows;
}

describe('recordMovements', () => {
  it('writes a batch of new movements, entries and legs, in one statement; recording again writes nothing', async () => {
    const batch = Array.from({ length: 50 }, (_, i) => deposit('0xt1', i, 10n, BigInt(1000 + i)));
    const first = await record(batch);
    expect(first.queries).toBe(1);
    expect(first.written.map((w) => w.movement)).toEqual(batch);
    const rows = await entriesOf('0xt1');
    expect(rows).toHaveLength(50);
    expect(rows.map((r) => r.id)).toEqual(first.written.map((w) => w.entryId.toString()));
    expect(rows[7]).toMatchObject({
      leg_key: 'log:7',
      revision: 0,
      reverses_id: null,
      legs: `external ${USDT} -1007, address:ethereum:test:0xaddr7 ${USDT} 1007`,
    });
    const entry = await tdb.db
      .selectFrom('journal_entries')
      .selectAll()
      .where('id', '=', first.written[7]!.entryId)
      .executeTakeFirstOrThrow();
    expect(entry).toMatchObject({
      kind: 'deposit',
      block_height: 10n,
      block_hash: '0xblock10',
      merchant_id: 'mch_x',
      session_id: 'cs_7',
      object_type: 'deposit',
      object_id: 'dep_0xt1_7',
    });

    const again = await record(batch);
    expect(again.written).toEqual([]);
    expect(await entriesOf('0xt1')).toHaveLength(50);

    // Old and new mixed, a key twice in one batch: only the new ones, once each, answered in the order given.
    const mixed = [
      deposit('0xt1', 3, 10n, 1003n),
      deposit('0xt1', 60, 10n, 5n),
      deposit('0xt1', 61, 10n, 6n),
      deposit('0xt1', 60, 10n, 5n),
    ];
    const m = await record(mixed);
    expect(m.written.map((w) => w.movement)).toEqual([mixed[1], mixed[2]]);
    expect(await entriesOf('0xt1')).toHaveLength(52);
  });

  it('records a movement reversed by a reorg again as its next revision, once', async () => {
    const seen = deposit('0xt2', 0, 20n, 777n);
    const [original] = (await record([seen])).written;
    expect(await tdb.db.transaction().execute((trx) => reverseObservedAbove(trx, chain, 19n))).toBe(1);
    // The same transfer in the new branch, beside one never seen before.
    const landed = { ...seen, blockHeight: 21n, blockHash: '0xblock21' };
    const fresh = deposit('0xt2', 1, 21n, 5n);
    const r = await record([landed, fresh]);
    expect(r.written.map((w) => w.movement)).toEqual([landed, fresh]);
    expect((await record([landed, fresh])).written).toEqual([]);
    const rows = await entriesOf('0xt2');
    expect(rows.map((x) => [x.leg_key, x.revision, x.reverses_id])).toEqual([
      ['log:0', 0, null],
      ['log:0', 0, original!.entryId.toString()],
      ['log:1', 0, null], // new keys first (one statement), then the keys looked at again
      ['log:0', 1, null],
    ]);
    expect(rows[1]!.legs).toBe(`address:ethereum:test:0xaddr0 ${USDT} -777, external ${USDT} 777`);
    // Reversed again and seen a third time: revision 2.
    await tdb.db.transaction().execute((trx) => reverseObservedAbove(trx, chain, 20n));
    const third = await record([{ ...seen, blockHeight: 22n }]);
    expect(third.written).toHaveLength(1);
    const live = (await entriesOf('0xt2')).filter((x) => x.leg_key === 'log:0' && x.reverses_id === null);
    expect(live.map((x) => x.revision)).toEqual([0, 1, 2]);
  });

  it('refuses legs naming no entry, an unbalanced entry, and TRUNCATE', async () => {
    const [w] = (await record([deposit('0xt3', 0, 30n, 9n)])).written;
    await expect(
      sql`insert into journal_legs (entry_id, account, asset, amount) values (987654321, 'external', ${USDT}, 5), (987654321, 'fees:ethereum', ${USDT}, -5)`.execute(
        tdb.db,
      ),
    ).rejects.toMatchObject({ code: '23503' });
    // Balanced among themselves, added to a balanced entry: accepted; one more leg alone unbalances it: refused.
    await sql`insert into journal_legs (entry_id, account, asset, amount)
              values (${w!.entryId.toString()}::bigint, 'fees:ethereum', ${USDT}, 1), (${w!.entryId.toString()}::bigint, 'treasury:x', ${USDT}, -1)`.execute(
      tdb.db,
    );
    await expect(
      sql`insert into journal_legs (entry_id, account, asset, amount) values (${w!.entryId.toString()}::bigint, 'fees:bsc', ${USDT}, 4)`.execute(
        tdb.db,
      ),
    ).rejects.toMatchObject({ code: '23514', message: expect.stringMatching(/unbalanced/) });
    await expect(sql`truncate journal_legs`.execute(tdb.db)).rejects.toThrow(/append-only/);
    await expect(sql`truncate journal_entries cascade`.execute(tdb.db)).rejects.toThrow(/append-only/);
    expect(await entriesOf('0xt3')).toHaveLength(1);
  });
});
