import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confirmFinalDeposits, recordObservedDepositRows } from '../../src/ledger/payments/deposits.js';
import type { ObservedDeposit } from '../../src/ledger/core/observed-deposit.js';
import type { ChainRef } from '../../src/ledger/core/chain-ref.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

// The credit transaction in batches (docs/performance.md "EVM watcher"): however many sessions one confirming step
// pays, it makes the same number of statements, and writes what one round trip per session wrote: settlement rows,
// payment.failed before payment.completed, each completed event with the session's received payments.

const chain: ChainRef = { network: 'ethereum', mode: 'test' };
const USDT = '0x00000000000000000000000000000000000000a1';
const USDC = '0x00000000000000000000000000000000000000a2';
let tdb: TestDatabase;
const counter = { on: false, queries: 0 };
const original = pg.Client.prototype.query;

beforeAll(async () => {
  tdb = await createTestDatabase();
  await tdb.db.insertInto('merchants').values({ id: 'mch_batch', name: 'batch', webhook_url: null, webhook_secret_enc: 'x' }).execute();
  pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
    if (counter.on) counter.queries++;
    return (original as (...x: unknown[]) => unknown).apply(this, a);
  } as typeof original;
}, 120_000);
afterAll(async () => {
  pg.Client.prototype.query = original;
  await tdb?.destroy();
});

/** `n` open sessions owing 1.00 USDT each, with deposit addresses; ids cs_<tag><i>. */
async function sessions(tag: string, n: number): Promise<Array<{ id: string; address: string }>> {
  const out = Array.from({ length: n }, (_, i) => ({
    id: `cs_${tag}${i}`,
    address: `0x${tag}${String(i).padStart(40 - tag.length, '0')}`,
  }));
  for (const s of out) {
    await sql`insert into payment_sessions (id, merchant_id, mode, order_id, amount_minor, currency, target_currency, target_amount_minor,
                hd_account, network, token, deposit_address, expires_at)
              values (${s.id}, 'mch_batch', 'test', ${s.id}, 100, 'USDT', 'USDT', 100, 1, 'ethereum', 'USDT', ${s.address},
                      now() + interval '1 day')`.execute(tdb.db);
    await sql`insert into deposit_addresses (network, mode, address, session_id) values ('ethereum', 'test', ${s.address}, ${s.id})`.execute(
      tdb.db,
    );
  }
  return out;
}

/** Session i gets: exactly 1.00 (i % 3 = 0), 1.50 (1: overpaid), 0.40 (2: stays open); session 0 first gets USDC too. */
function transfers(tag: string, list: Array<{ address: string }>, block: bigint): ObservedDeposit[] {
  const base = {
    blockHeight: block,
    blockHash: `0x${'b'.repeat(60)}${block.toString(16).padStart(4, '0')}`,
    blockTime: new Date(),
    from: `0x${'f'.repeat(40)}`,
  };
  const out: ObservedDeposit[] = [];
  const hash = (k: number) => `0x${tag}${String(k).padStart(64 - tag.length, '0')}`;
  out.push({ ...base, txHash: hash(9999), logIndex: 0, token: 'USDC', tokenContract: USDC, to: list[0]!.address, amount: 2_000_000n });
  list.forEach((s, i) => {
    const amount = [1_000_000n, 1_500_000n, 400_000n][i % 3]!;
    out.push({ ...base, txHash: hash(i), logIndex: i + 1, token: 'USDT', tokenContract: USDT, to: s.address, amount });
  });
  return out;
}

async function creditBatch(tag: string, n: number, block: bigint) {
  const list = await sessions(tag, n);
  return tdb.db.transaction().execute(async (trx) => {
    await recordObservedDepositRows(trx, chain, transfers(tag, list, block));
    counter.queries = 0;
    counter.on = true;
    try {
      const r = await confirmFinalDeposits(trx, chain, block, () => 6);
      return { r, queries: counter.queries, list };
    } finally {
      counter.on = false;
    }
  });
}

describe('confirmFinalDeposits in batches', () => {
  it('makes as many statements for 27 paid sessions as for 3, and writes the same rows and events per session', async () => {
    const small = await creditBatch('aa', 4, 100n);
    const large = await creditBatch('bb', 40, 101n);
    expect(small.r.paidSessionIds).toHaveLength(3); // sessions 0, 1, 3
    expect(large.r.paidSessionIds).toHaveLength(27);
    expect(large.queries).toBe(small.queries);

    for (const [i, s] of large.list.entries()) {
      const row = await tdb.db.selectFrom('payment_sessions').selectAll().where('id', '=', s.id).executeTakeFirstOrThrow();
      const settled = await tdb.db.selectFrom('session_settlements').selectAll().where('session_id', '=', s.id).executeTakeFirst();
      const events = (
        await sql<{ type: string; payload: any; seq: string }>`
        select type, payload, seq::text from outbox_events where aggregate_id = ${s.id} order by seq`.execute(tdb.db)
      ).rows;
      if (i % 3 === 2) {
        expect(row).toMatchObject({ status: 'open', received_base: 400_000n });
        expect(settled).toBeUndefined();
        expect(events.map((e) => e.type)).toEqual(i === 0 ? ['payment.failed'] : []);
        continue;
      }
      const received = i % 3 === 0 ? 1_000_000n : 1_500_000n;
      expect(row).toMatchObject({ status: 'paid', received_base: received });
      expect(settled).toMatchObject({
        due_base: 1_000_000n,
        received_base: received,
        overpaid_base: received - 1_000_000n,
        shortfall_base: 0n,
      });
      expect(events.map((e) => e.type)).toEqual(i === 0 ? ['payment.failed', 'payment.completed'] : ['payment.completed']);
      const completed = events.at(-1)!.payload;
      expect(completed.type).toBe('payment.completed');
      expect(completed.id).toMatch(/^evt_\d+$/);
      expect(completed.data.object).toMatchObject({
        session_id: s.id,
        status: 'completed',
        amount_received_base: received.toString(),
        ...(received > 1_000_000n ? { overpaid_amount_base: '500000' } : {}),
      });
      // The session's final transfers as they stand after this step: the USDC one (unmatched) and the credited one.
      const payments = completed.data.object.payments as Array<{ status: string; token: string }>;
      expect(payments.map((p) => `${p.status} ${p.token}`)).toEqual(i === 0 ? ['unmatched USDC', 'credited USDT'] : ['credited USDT']);
    }
    // One event id per event; the failed event of session 0 comes before every completed event of the batch.
    const all = (await sql<{ id: string; type: string }>`select id, type from outbox_events order by seq`.execute(tdb.db)).rows;
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
    expect(all.filter((e) => e.type === 'payment.failed')).toHaveLength(2); // session 0 of each batch
    const firstCompleted = all.findIndex((e) => e.type === 'payment.completed');
    expect(all[firstCompleted - 1]!.type).toBe('payment.failed'); // the small batch's failed event precedes its completed ones
  });
});
