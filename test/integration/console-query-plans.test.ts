import { explainable, largeTables, recordQueries, seqScanOffenders, type QueryRecorder } from '../support/query-plans.js';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleActor } from '../../src/console/actor.js';
import { foldOverviewDeltas } from '../../src/ledger/console/overview-daily.js';
import { type ConsoleHarness, startConsoleHarness } from '../support/console-harness.js';
import { depositAddressOf, merchantIdOf, seedConsoleData, sessionIdOf, txHashOf } from '../support/console-seed.js';

// The console's counterpart of db-query-plans.test.ts: every query the console's GET routes and the overview issue,
// as an operator and as a merchant user, recorded at the driver (pg.Client#query) with its parameters and EXPLAINed
// with them over a year of seeded data (test/support/console-seed.ts: tens of thousands of sessions, deposits,
// refunds, payout attempts and webhook deliveries over 100 merchants, ANALYZEd). A sequential scan of any table
// holding more than a few thousand rows fails the test, naming the route and the statement. The timings at a million
// sessions are the benchmark's (npm run bench:console; docs/performance.md).

const LARGE_TABLE_ROWS = 5000;
const SIZE = { merchants: 100, sessions: 20_000, refunds: 6_000, deliveries: 6_000 };

let recorder: QueryRecorder;
let h: ConsoleHarness;
let merchant: ConsoleActor;

beforeAll(async () => {
  h = await startConsoleHarness();
  await seedConsoleData(h.t.db, { ...SIZE, now: new Date(), box: h.ops.box });
  // The seed's inserts left a delta per row for the overview's pre-aggregates; a fold reads them all (by design, a
  // drain): fold them here as the first overview would, so the traced overview plans its reads, not the seed's fold.
  await foldOverviewDeltas(h.t.db);
  await sql`analyze`.execute(h.t.db);
  merchant = h.merchantUser(merchantIdOf(2));
  recorder = recordQueries();
}, 60_000);

afterAll(async () => {
  recorder?.restore();
  await h?.close();
});

describe("query plans of the console's reads on a large database", () => {
  it('no query of a console GET route or the overview scans a large table sequentially', async () => {
    // Session 1001: i ≡ 1 (mod 20) and (mod 100): paid, of merchant 2 (the merchant user's), with a refund.
    const i = 1001;
    const refund = await sql<{ id: string }>`select id from refunds where session_id = ${sessionIdOf(i)} limit 1`.execute(h.t.db);
    const delivery = await sql<{
      event_id: string;
    }>`select event_id from webhook_deliveries where merchant_id = ${merchantIdOf(2)} limit 1`.execute(h.t.db);
    const refundId = refund.rows[0]?.id;
    const eventId = delivery.rows[0]?.event_id;
    expect(refundId).toBeDefined();
    expect(eventId).toBeDefined();
    const week = `created_from=${new Date(Date.now() - 97 * 86_400_000).toISOString()}&created_to=${new Date(Date.now() - 90 * 86_400_000).toISOString()}`;
    // An export of a day: an export of months reads most of the table, and a hash join over it is the right plan there.
    const from = new Date(Date.now() - 86_400_000).toISOString();
    const shared = [
      '/payments',
      '/payments?order=asc',
      '/payments?status=canceled',
      '/payments?network=tron&token=USDT&mode=live',
      '/payments?sort=amount',
      '/payments?sort=amount&order=asc&amount_min=10.00&amount_max=20.00',
      `/payments?${week}&status=expired`,
      `/payments?q=${txHashOf(i)}`,
      `/payments?q=${depositAddressOf(i)}`,
      `/payments?q=order-${i}`,
      `/payments?q=${sessionIdOf(i)}`,
      `/payments/${sessionIdOf(i)}`,
      `/search?q=${txHashOf(i)}`,
      `/search?q=${depositAddressOf(i)}`,
      `/search?q=order-${i}`,
      `/search?q=${sessionIdOf(i)}`,
      '/search?q=bench-rtx-1',
      '/refunds',
      '/refunds?status=failed&network=solana',
      `/refunds?${week}`,
      `/refunds/${refundId}`,
      '/stranded?kind=deposit',
      '/stranded?kind=session',
      '/stranded?kind=session&network=tron&mode=live',
      '/webhooks/deliveries',
      '/webhooks/deliveries?status=failed',
      `/webhooks/deliveries/${eventId}`,
      '/subscriptions',
      '/keys',
      '/overview',
      `/exports/sessions?format=json&from=${from}`,
      `/exports/payments?format=json&from=${from}`,
      `/exports/refunds?format=json&from=${from}`,
    ];
    const operatorOnly = [
      `/payments?merchant_id=${merchantIdOf(2)}`,
      `/refunds?merchant_id=${merchantIdOf(2)}`,
      `/overview?merchant_id=${merchantIdOf(2)}`,
      `/webhooks/endpoint?merchant_id=${merchantIdOf(2)}`,
      '/audit',
      `/audit?merchant_id=${merchantIdOf(2)}`,
      '/users',
      '/merchants',
      `/merchants/${merchantIdOf(2)}`,
      '/networks',
      '/sweeps',
      '/sweeps/policy?network=tron&mode=live&token=USDT',
      '/treasury/destinations',
      '/reconcile/runs',
      '/journal/unexplained',
      '/journal/accounts/external',
      '/wallets',
    ];
    const merchantOnly = ['/webhooks/endpoint', `/exports/sessions?format=json&from=${from}&mode=live`];
    const calls: [ConsoleActor, string][] = [
      ...shared.map((p): [ConsoleActor, string] => [h.operator, p]),
      ...shared.filter((p) => !p.startsWith('/exports')).map((p): [ConsoleActor, string] => [merchant, p]),
      ...operatorOnly.map((p): [ConsoleActor, string] => [h.operator, p]),
      ...merchantOnly.map((p): [ConsoleActor, string] => [merchant, p]),
    ];
    // Walk to page 2 of the lists with a cursor as well.
    for (const [actor, path] of calls) {
      const route = `${actor.role} GET ${path.split('?')[0]}${path.includes('?') ? `?${path.split('?')[1]!.slice(0, 60)}` : ''}`;
      await recorder.traced(route, async () => {
        const r = await h.call(actor, 'GET', `/api${path}`);
        // A sweep policy needs the network configured (none is here): its refusal still runs the route's reads.
        const status = path.startsWith('/sweeps/policy') ? 409 : 200;
        expect(r.status, `${route}: ${JSON.stringify(r.json).slice(0, 300)}`).toBe(status);
        const cursor = typeof r.json === 'object' && r.json ? (r.json.next_cursor as string | null | undefined) : undefined;
        if (cursor) {
          const sep = path.includes('?') ? '&' : '?';
          const next = await h.call(actor, 'GET', `/api${path}${sep}cursor=${encodeURIComponent(cursor)}`);
          expect(next.status, `${route} page 2`).toBe(200);
        }
      });
    }

    const large = await largeTables(h.t.db, LARGE_TABLE_ROWS);
    for (const t of ['payment_sessions', 'deposits', 'refunds', 'payout_attempts', 'webhook_deliveries', 'outbox_events'])
      expect(large).toContain(t);

    const statements = explainable(recorder.captured(), /^\s*(select|with)\b/i);
    expect(statements.length).toBeGreaterThan(40);
    const offenders = await seqScanOffenders(h.t.url, statements, large);
    expect(offenders, offenders.join('\n')).toEqual([]);
  }, 90_000);
});
