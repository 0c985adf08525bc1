import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedLimitedTotals } from '../../src/ledger/signer/signer-audit.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

// The signer's limit read (src/ledger/signer/signer-audit.ts, docs/signer.md "Limits"): per token, the sum over the
// objects signed in the window of the largest amount signed for each, summed in SQL. A merchant's day of signed payouts
// reaches the signer as one row per token (it was one row per refund: 10,000 per signature for a merchant paying
// 10,000 refunds a day, inside the limit lock and the wallet's nonce section), with the same totals.

let t: TestDatabase;
const now = new Date();
const ago = (minutes: number) => new Date(now.getTime() - minutes * 60_000);
let seq = 0;

async function signed(o: {
  purpose?: string;
  object: string;
  token: string;
  amount: bigint;
  at: Date;
  merchant?: string;
  outcome?: string;
  limited?: boolean;
}) {
  const purpose = o.purpose ?? 'refund_payout';
  const field = purpose === 'refund_payout' ? 'refund_id' : 'step_id';
  const summary = { token: o.token, ...(o.limited ? { limited: true } : {}) };
  const outcome = o.outcome ?? 'signed';
  await sql`insert into signer_audit (at, request_id, purpose, intent, merchant_id, network, mode, key_path, outcome, code, summary, amount_base)
    values (${o.at}, ${`req_${seq++}`}, ${purpose}, ${JSON.stringify({ purpose, [field]: o.object })}::jsonb, ${o.merchant ?? 'mch_a'},
            'ethereum', 'live', 'secp256k1:m/0', ${outcome}, ${outcome === 'refused' ? 'over_limit' : null},
            ${JSON.stringify(summary)}::jsonb, ${o.amount.toString()})`.execute(t.db);
}

beforeAll(async () => {
  t = await createTestDatabase();
  // USDT: rf_1 signed twice (a replacement at a larger amount, both within the hour), rf_2 two hours ago, rf_3 two days
  // ago (out of both windows); USDC: rf_4 in the hour. Not counted: the object being asked for (rf_ask), a refused
  // request, another merchant, a sweep step.
  await signed({ object: 'rf_1', token: 'USDT', amount: 1_000_000n, at: ago(30) });
  await signed({ object: 'rf_1', token: 'USDT', amount: 1_200_000n, at: ago(10) });
  await signed({ object: 'rf_2', token: 'USDT', amount: 5_000_000n, at: ago(120) });
  await signed({ object: 'rf_3', token: 'USDT', amount: 9_000_000n, at: ago(48 * 60) });
  await signed({ object: 'rf_4', token: 'USDC', amount: 7_000_000n, at: ago(5) });
  await signed({ object: 'rf_ask', token: 'USDT', amount: 3_000_000n, at: ago(1) });
  await signed({ object: 'rf_5', token: 'USDT', amount: 4_000_000n, at: ago(1), outcome: 'refused' });
  await signed({ object: 'rf_6', token: 'USDT', amount: 4_000_000n, at: ago(1), merchant: 'mch_b' });
  await signed({ purpose: 'sweep_step', object: 'st_1', token: 'USDT', amount: 8_000_000n, at: ago(1), limited: true });
  await signed({ purpose: 'sweep_step', object: 'st_2', token: 'USDT', amount: 6_000_000n, at: ago(1) });
  // A busy day: 2,000 more refunds of 1 USDT, within the day but not the hour.
  await sql`insert into signer_audit (at, request_id, purpose, intent, merchant_id, network, mode, key_path, outcome, summary, amount_base)
    select ${ago(90)}::timestamptz, 'req_busy_' || i, 'refund_payout', jsonb_build_object('purpose', 'refund_payout', 'refund_id', 'rf_busy_' || i),
      'mch_a', 'ethereum', 'live', 'secp256k1:m/0', 'signed', '{"token":"USDT"}'::jsonb, 1000000
    from generate_series(1, 2000) i`.execute(t.db);
}, 60_000);

afterAll(async () => {
  await t?.destroy();
});

const base = { merchantId: 'mch_a', network: 'ethereum', mode: 'live', except: 'rf_ask', now };

describe('signer limits: totals per token, summed in SQL', () => {
  it('refund payouts: each object once at its largest amount, per window; the asked object, refusals and others left out', async () => {
    const totals = await signedLimitedTotals(t.db, { ...base, purpose: 'refund_payout' });
    const byToken = Object.fromEntries(totals.map((r) => [r.token, r]));
    expect(Object.keys(byToken).sort()).toEqual(['USDC', 'USDT']);
    expect(byToken.USDT).toEqual({ token: 'USDT', lastHour: 1_200_000n, lastDay: 1_200_000n + 5_000_000n + 2000n * 1_000_000n });
    expect(byToken.USDC).toEqual({ token: 'USDC', lastHour: 7_000_000n, lastDay: 7_000_000n });
  });

  it('sweep steps: only those marked limited', async () => {
    const totals = await signedLimitedTotals(t.db, { ...base, purpose: 'sweep_step', except: 'st_none' });
    expect(totals).toEqual([{ token: 'USDT', lastHour: 8_000_000n, lastDay: 8_000_000n }]);
  });

  it('one row per token reaches the signer, whatever the number of objects signed that day', async () => {
    // Rows as the driver receives them: the statement's result, counted at pg's query level.
    const rowsReceived: number[] = [];
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
      const r = (query as (...x: unknown[]) => unknown).apply(this, a);
      if (r instanceof Promise) void r.then((res: { rows?: unknown[] }) => rowsReceived.push(res?.rows?.length ?? 0)).catch(() => {});
      return r;
    } as typeof query;
    try {
      await signedLimitedTotals(t.db, { ...base, purpose: 'refund_payout' });
    } finally {
      pg.Client.prototype.query = query;
    }
    expect(rowsReceived).toEqual([2]);
  });
});
