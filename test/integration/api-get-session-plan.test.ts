import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RefundRouteDeps } from '../../src/api/routes/refunds.js';
import { newId } from '../../src/domain/ids.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import type { SignedClient } from '../support/signed-client.js';

// GET /checkout/sessions/:id is one statement, planned on the primary key even when payment_sessions has never been
// analyzed and one merchant owns every row (a fresh deployment, a bulk import, autovacuum off; docs/performance.md,
// "API auth path"). The lookup used to name merchant_id and mode beside the id, and the planner then walked
// payment_sessions_list_idx (merchant_id, mode, created_at, id): every session of the merchant (20 ms at the benchmark's 85,000).
// Statements are recorded at the driver (pg.Client#query) and EXPLAINed with their parameters.

const SESSIONS = 60_000; // below ~50,000 the planner still prefers the primary key

const chains: RefundRouteDeps['chains'] = {
  normalizeAddress: (_n, _m, text) => text.toLowerCase(),
  tokenDecimals: (network, _mode, token) => (network === 'ethereum' && (token === 'USDT' || token === 'USDC') ? 6 : undefined),
  displayAddress: (_n, _m, canonical) => canonical,
};

type Query = (...args: unknown[]) => unknown;
const originalQuery = pg.Client.prototype.query as unknown as Query;
const recorded: Array<{ text: string; values: unknown[] }> = [];
let recording = false;

let h: ApiHarness;
let shop: SignedClient;
let merchantId: string;

async function statementsOf<T>(call: () => Promise<T>): Promise<{ result: T; statements: Array<{ text: string; values: unknown[] }> }> {
  recorded.length = 0;
  recording = true;
  try {
    const result = await call();
    return { result, statements: [...recorded] };
  } finally {
    recording = false;
  }
}

/** Every index a plan reads payment_sessions through, and whether it scans the table sequentially. */
function sessionAccess(plan: unknown, out: string[] = []): string[] {
  if (Array.isArray(plan)) for (const p of plan) sessionAccess(p, out);
  else if (plan && typeof plan === 'object') {
    const node = plan as Record<string, unknown>;
    if (node['Relation Name'] === 'payment_sessions') out.push(String(node['Index Name'] ?? node['Node Type']));
    for (const v of Object.values(node)) if (typeof v === 'object') sessionAccess(v, out);
  }
  return out;
}

async function explain(text: string, values: unknown[]): Promise<string[]> {
  const client = new pg.Client({ connectionString: h.t.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ 'QUERY PLAN': unknown }>(`explain (format json) ${text}`, values);
    return sessionAccess(rows[0]!['QUERY PLAN']);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  // Keys stay cached for the whole test: each request below then runs its route's statements only.
  h = await startApiHarness({ chains, keyCacheMs: 600_000 });
  const m = await h.merchant('Big shop');
  merchantId = m.merchantId;
  shop = m.test;
  // Never analyzed, whatever the server's autovacuum setting.
  await sql`alter table payment_sessions set (autovacuum_enabled = false)`.execute(h.t.db);
  await sql`insert into payment_sessions (id, merchant_id, mode, order_id, amount_minor, currency, target_currency,
      target_amount_minor, hd_account, status, expires_at)
    select 'cs_bulk' || g, ${merchantId}, 'test', 'bulk' || g, 1000, 'USD', 'USDT', 1000,
      (select account_index from merchant_hd_accounts where merchant_id = ${merchantId} and mode = 'test'), 'open',
      now() + interval '30 minutes'
    from generate_series(1, ${SESSIONS}) g`.execute(h.t.db);
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [text, values] = args;
    if (recording && typeof text === 'string') recorded.push({ text, values: Array.isArray(values) ? values : [] });
    return originalQuery.apply(this, args);
  } as unknown as typeof pg.Client.prototype.query;
}, 60_000);

afterAll(async () => {
  pg.Client.prototype.query = originalQuery as unknown as typeof pg.Client.prototype.query;
  await h?.close();
});

describe('GET /checkout/sessions/:id on an unanalyzed table of one merchant', () => {
  it('the old lookup shape walks the merchant index here (the hazard this test guards against)', async () => {
    const plan = await explain('select * from payment_sessions where id = $1 and merchant_id = $2 and mode = $3', [
      'cs_bulk777',
      merchantId,
      'test',
    ]);
    expect(plan).toEqual(['payment_sessions_list_idx']);
  });

  it('is one statement on the primary key, and answers what the list answers for the same session', async () => {
    const orderId = `plan-${Date.now()}`;
    const created = await shop.post('/api/v1/checkout/sessions/create', { amount: '10.00', currency: 'USD', order_id: orderId });
    expect(created.status).toBe(200);
    const id = created.json.id as string;
    // Two final deposits (one credited, one unmatched, in chain order reversed by insertion) and a provisional one,
    // which is not money yet and must not be listed.
    const deposit = (n: number, block: bigint, status: 'confirmed' | 'provisional', disposition: 'credited' | 'unmatched' | null) => ({
      id: newId('dep'),
      network: 'ethereum',
      mode: 'test' as const,
      tx_hash: `0x${String(n).repeat(64).slice(0, 64)}`,
      log_index: n,
      block_number: block,
      block_hash: `0x${'cd'.repeat(32)}`,
      block_time: new Date(),
      token: 'USDT',
      token_contract: `0x${'ab'.repeat(20)}`,
      from_address: `0x${'33'.repeat(20)}`,
      to_address: `0x${'44'.repeat(20)}`,
      amount_base: 1_000_000n * BigInt(n),
      session_id: id,
      status,
      disposition,
      unmatched_reason: disposition === 'unmatched' ? ('session_paid' as const) : null,
      confirmed_at: status === 'confirmed' ? new Date() : null,
    });
    await h.t.db
      .insertInto('deposits')
      .values([deposit(2, 9n, 'confirmed', 'unmatched'), deposit(1, 5n, 'confirmed', 'credited'), deposit(3, 11n, 'provisional', null)])
      .execute();

    await shop.get(`/api/v1/checkout/sessions/${id}`); // resolves and caches the key, stamps last_used_at
    const { result: got, statements } = await statementsOf(() => shop.get(`/api/v1/checkout/sessions/${id}`));
    expect(got.status, got.text).toBe(200);
    expect(statements, statements.map((x) => x.text).join('\n')).toHaveLength(1);
    expect(await explain(statements[0]!.text, statements[0]!.values)).toEqual(['payment_sessions_pkey']);

    const payments = got.json.payments as Array<{ transaction_hash: string; amount: string }>;
    expect(payments.map((p) => p.amount)).toEqual(['1.00', '2.00']);
    const listed = await shop.get(`/api/v1/checkout/sessions?order_id=${orderId}`);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.json.data, listed.text).toHaveLength(1);
    expect((listed.json.data as unknown[])[0]).toEqual(got.json);
  });

  it("another merchant's session is not found, in one statement on the primary key", async () => {
    const other = await h.merchant('Other shop');
    const theirs = await other.test.post('/api/v1/checkout/sessions/create', { amount: '5.00', currency: 'USD', order_id: 'theirs' });
    expect(theirs.status).toBe(200);
    await shop.get('/api/v1/checkout/sessions/cs_bulk1');
    const { result, statements } = await statementsOf(() => shop.get(`/api/v1/checkout/sessions/${theirs.json.id as string}`));
    expect(result.status, result.text).toBe(404);
    expect(result.json.error.code).toBe('resource_not_found');
    expect(statements, statements.map((x) => x.text).join('\n')).toHaveLength(1);
    expect(await explain(statements[0]!.text, statements[0]!.values)).toEqual(['payment_sessions_pkey']);
    // The owner's own live key does not see its test session either.
    const live = await other.live();
    expect((await live.get(`/api/v1/checkout/sessions/${theirs.json.id as string}`)).status).toBe(404);
  });
});
