import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orphanProvisionalDepositsAbove, recordObservedDepositRows } from '../../src/ledger/payments/deposits.js';
import type { ObservedDeposit } from '../../src/ledger/core/observed-deposit.js';
import { journalAsset } from '../../src/ledger/journal/accounts.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

// The watcher's deposits journaled by the statement that records them (docs/performance.md "Journal cost"): the same
// entry and legs recordMovements writes, one statement for deposits, entries and legs; nothing written twice; a
// deposit revived after a reorg gets its key's next revision; a zero amount moves nothing. And the database checks
// that replaced a foreign key and the indexes narrowed by migration 2026_11_28_0100_journal_index_cost still hold.

const chain = { network: 'ethereum', mode: 'test' as const };
const USDT = journalAsset('ethereum', 'test', 'USDT');
const ADDR = (i: number) => `0x${'d'.repeat(36)}${String(i).padStart(4, '0')}`;
let tdb: TestDatabase;
const counter = { on: false, queries: 0 };
const original = pg.Client.prototype.query;

beforeAll(async () => {
  tdb = await createTestDatabase();
  await tdb.db.insertInto('merchants').values({ id: 'mch_jd', name: 'jd', webhook_url: null, webhook_secret_enc: 'x' }).execute();
  for (let i = 0; i < 3; i++) {
    await sql`insert into payment_sessions (id, merchant_id, mode, order_id, amount_minor, currency, target_currency, target_amount_minor,
                hd_account, network, token, deposit_address, expires_at)
              values (${`cs_jd${i}`}, 'mch_jd', 'test', ${`o${i}`}, 100, 'USDT', 'USDT', 100, 1, 'ethereum', 'USDT', ${ADDR(i)},
                      now() + interval '1 day')`.execute(tdb.db);
    await sql`insert into deposit_addresses (network, mode, address, session_id) values ('ethereum', 'test', ${ADDR(i)}, ${`cs_jd${i}`})`.execute(
      tdb.db,
    );
  }
  pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
    if (counter.on) counter.queries++;
    return (original as (...x: unknown[]) => unknown).apply(this, a);
  } as typeof original;
}, 120_000);
afterAll(async () => {
  pg.Client.prototype.query = original;
  await tdb?.destroy();
});

const transfer = (tx: string, log: number, to: string, amount: bigint, height = 10n): ObservedDeposit => ({
  txHash: tx,
  logIndex: log,
  blockHeight: height,
  blockHash: `0xblock${height}`,
  blockTime: new Date(),
  token: 'USDT',
  tokenContract: '0x00000000000000000000000000000000000000aa',
  from: '0x00000000000000000000000000000000000000bb',
  to,
  amount,
});

async function observe(items: ObservedDeposit[]) {
  return tdb.db.transaction().execute(async (trx) => {
    counter.queries = 0;
    counter.on = true;
    try {
      const rows = await recordObservedDepositRows(trx, chain, items);
      return { rows, queries: counter.queries };
    } finally {
      counter.on = false;
    }
  });
}

async function entriesOf(tx: string) {
  return (
    await sql<{
      id: string;
      leg_key: string;
      revision: number;
      kind: string;
      block_height: string;
      block_hash: string;
      merchant_id: string | null;
      session_id: string | null;
      object_type: string;
      object_id: string;
      reverses_id: string | null;
      legs: string;
    }>`
      select e.id::text, e.leg_key, e.revision, e.kind, e.block_height::text, e.block_hash, e.merchant_id, e.session_id,
             e.object_type, e.object_id, e.reverses_id::text,
             string_agg(l.account || ' ' || l.asset || ' ' || l.amount::text, ', ' order by l.amount) as legs
      from journal_entries e join journal_legs l on l.entry_id = e.id
      where e.tx_hash = ${tx} group by e.id order by e.id`.execute(tdb.db)
  ).rows;
}

describe('deposits journaled by the statement that records them', () => {
  it('writes each deposit, its entry and its two legs in one statement, once', async () => {
    const items = [transfer('0xj1', 0, ADDR(0), 1_000_000n), transfer('0xj1', 1, ADDR(1), 2_500_000n), transfer('0xj1', 2, ADDR(9), 7n)];
    const first = await observe(items);
    expect(first.queries).toBe(1);
    expect(first.rows).toHaveLength(3);
    for (const r of first.rows) expect(r).not.toHaveProperty('journaled');
    const rows = await entriesOf('0xj1');
    expect(rows.map((r) => r.leg_key)).toEqual(['log:0', 'log:1', 'log:2']);
    const dep1 = first.rows.find((r) => r.log_index === 1)!;
    expect(rows[1]).toMatchObject({
      revision: 0,
      kind: 'deposit',
      block_height: '10',
      block_hash: '0xblock10',
      merchant_id: 'mch_jd',
      session_id: 'cs_jd1',
      object_type: 'deposit',
      object_id: dep1.id,
      reverses_id: null,
      legs: `external ${USDT} -2500000, address:ethereum:test:${ADDR(1)} ${USDT} 2500000`,
    });
    // A transfer to an address of ours with no session (unmatched) is journaled too, merchant and session unknown.
    expect(rows[2]).toMatchObject({
      merchant_id: null,
      session_id: null,
      legs: `external ${USDT} -7, address:ethereum:test:${ADDR(9)} ${USDT} 7`,
    });

    const again = await observe(items);
    expect(again.rows).toEqual([]);
    expect(await entriesOf('0xj1')).toHaveLength(3);
  });

  it('journals nothing for a zero amount', async () => {
    const r = await observe([transfer('0xj0', 0, ADDR(2), 0n)]);
    expect(r.rows).toHaveLength(1);
    expect(await entriesOf('0xj0')).toEqual([]);
    const n = await sql<{ n: string }>`select count(*)::text as n from journal_entries where tx_hash = '0xj0'`.execute(tdb.db);
    expect(n.rows[0]!.n).toBe('0');
  });

  it('gives a deposit revived after a reorg its next revision (a second statement), beside new ones in the first', async () => {
    await observe([transfer('0xj2', 0, ADDR(2), 300n, 20n)]);
    await tdb.db.transaction().execute((trx) => orphanProvisionalDepositsAbove(trx, chain, 19n));
    const r = await observe([transfer('0xj2', 0, ADDR(2), 300n, 21n), transfer('0xj2', 1, ADDR(2), 5n, 21n)]);
    expect(r.rows.map((x) => [x.log_index, x.block_number])).toEqual([
      [0, 21n],
      [1, 21n],
    ]);
    expect(r.queries).toBe(2);
    const rows = await entriesOf('0xj2');
    expect(rows.map((x) => [x.leg_key, x.revision, x.reverses_id === null, x.block_height])).toEqual([
      ['log:0', 0, true, '20'],
      ['log:0', 0, false, '20'],
      ['log:1', 0, true, '21'],
      ['log:0', 1, true, '21'],
    ]);
    expect(rows[3]!.legs).toBe(`external ${USDT} -300, address:ethereum:test:${ADDR(2)} ${USDT} 300`);
    expect((await observe([transfer('0xj2', 0, ADDR(2), 300n, 21n)])).rows).toEqual([]);
    expect(await entriesOf('0xj2')).toHaveLength(4);
  });

  it('refuses a reversal naming no entry, and an unbalanced deposit entry, in the database', async () => {
    await expect(
      sql`insert into journal_entries (network, mode, tx_hash, leg_key, kind, block_height, reverses_id)
          values ('ethereum', 'test', '0xj3', 'log:0', 'deposit', 1, 987654321)`.execute(tdb.db),
    ).rejects.toMatchObject({ code: '23503', message: expect.stringMatching(/does not exist/) });
    const [e] = (await entriesOf('0xj1')).slice(0, 1);
    await expect(
      sql`insert into journal_legs (entry_id, account, asset, amount) values (${e!.id}::bigint, 'fees:ethereum', ${USDT}, 1)`.execute(
        tdb.db,
      ),
    ).rejects.toMatchObject({ code: '23514' });
  });

  it("serves an address's legs and a refund's entries from the narrowed indexes", async () => {
    const plan = async (q: string) =>
      tdb.db.transaction().execute(async (trx) => {
        await sql`set local enable_seqscan = off`.execute(trx);
        const r = await sql<{ 'QUERY PLAN': string }>`${sql.raw(`explain ${q}`)}`.execute(trx);
        return r.rows.map((x) => x['QUERY PLAN']).join('\n');
      });
    expect(await plan(`select * from journal_legs where account = 'address:ethereum:test:${ADDR(1)}'`)).toMatch(/journal_legs_account/);
    expect(await plan(`select * from journal_entries where object_type = 'refund' and object_id = 'rf_x'`)).toMatch(
      /journal_entries_object/,
    );
    // A deposit's entry is found by its key.
    expect(
      await plan(
        `select * from journal_entries where network = 'ethereum' and mode = 'test' and tx_hash = '0xj1' and leg_key = 'log:1' and reverses_id is null`,
      ),
    ).toMatch(/journal_entries_key/);
  });
});
