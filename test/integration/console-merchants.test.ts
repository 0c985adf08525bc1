import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveApiKey } from '../../src/ledger/merchants/merchants.js';
import { startConsoleHarness, type ConsoleHarness } from '../support/console-harness.js';

// The console's merchants over a real database: an operator lists, creates (test key and webhook secret once) and
// updates settings; a merchant user reads its own merchant only; every mutation audited.

let h: ConsoleHarness;
let a: { merchantId: string };

const audits = (action: string) => h.t.db.selectFrom('console_audit').selectAll().where('action', '=', action).orderBy('id').execute();
const text = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x));

beforeAll(async () => {
  h = await startConsoleHarness();
  a = await h.merchant('First shop');
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe('console merchants', () => {
  it('creates a merchant with a working test key and webhook secret shown once; audits without secrets', async () => {
    const r = await h.call(h.operator, 'POST', '/api/merchants', {
      name: 'Second shop',
      webhook_url: 'https://hooks.test.invalid/m',
      webhook_test_only: true,
    });
    expect(r.status).toBe(201);
    expect(r.json.merchant).toMatchObject({
      name: 'Second shop',
      webhook_url: 'https://hooks.test.invalid/m',
      session_lifetime_seconds: 1800,
      session_lifetime_source: 'default',
    });
    expect(r.json.webhook_secret).toMatch(/^whsec_/);
    expect((await resolveApiKey(h.t.db, h.ops.box, r.json.test_key.key))?.secret).toBe(r.json.test_key.secret);
    const rows = await audits('merchant.create');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      object_id: r.json.merchant.id,
      after: { name: 'Second shop', test_key_prefix: r.json.test_key.prefix },
    });
    expect(text(rows[0])).not.toContain(r.json.test_key.secret);
    expect(text(rows[0])).not.toContain(r.json.webhook_secret);
    const shown = await h.call(h.operator, 'GET', `/api/merchants/${r.json.merchant.id}`);
    expect(text(shown.json)).not.toContain(r.json.webhook_secret);
  });

  it('refuses bad input and a private webhook URL for live mode, creating nothing; refuses merchant users (403)', async () => {
    const n0 = (await h.t.db.selectFrom('merchants').select('id').execute()).length;
    expect((await h.call(h.operator, 'POST', '/api/merchants', { name: '' })).status).toBe(400);
    expect((await h.call(h.operator, 'POST', '/api/merchants', { name: 'x', color: 'red' })).status).toBe(400);
    const priv = await h.call(h.operator, 'POST', '/api/merchants', { name: 'x', webhook_url: 'http://10.0.0.1/hook' });
    expect(priv.status).toBe(400);
    expect(priv.json.error).toMatchObject({ code: 'url_refused', param: 'webhook_url' });
    expect((await h.call(h.merchantUser(a.merchantId), 'POST', '/api/merchants', { name: 'Mine' })).status).toBe(403);
    expect((await h.t.db.selectFrom('merchants').select('id').execute()).length).toBe(n0);
  });

  it('lists merchants oldest first by keyset, operator only', async () => {
    const p1 = await h.call(h.operator, 'GET', '/api/merchants?limit=1');
    expect(p1.status).toBe(200);
    expect(p1.json.data.map((m: { id: string }) => m.id)).toEqual([a.merchantId]);
    const p2 = await h.call(h.operator, 'GET', `/api/merchants?limit=1&cursor=${p1.json.next_cursor}`);
    expect(p2.json.data[0].name).toBe('Second shop');
    expect(p2.json.next_cursor).toBeNull();
    expect((await h.call(h.merchantUser(a.merchantId), 'GET', '/api/merchants')).status).toBe(403);
  });

  it('a merchant user reads its own merchant only', async () => {
    const other = await h.merchant('Other');
    const user = h.merchantUser(a.merchantId);
    const own = await h.call(user, 'GET', `/api/merchants/${a.merchantId}`);
    expect(own.status).toBe(200);
    expect(own.json.id).toBe(a.merchantId);
    expect((await h.call(user, 'GET', `/api/merchants/${other.merchantId}`)).status).toBe(403);
    expect((await h.call(h.operator, 'GET', '/api/merchants/mch_none')).status).toBe(404);
  });

  it('updates settings within their ranges (the CLI’s merchant update), audits before and after', async () => {
    expect((await h.call(h.operator, 'POST', `/api/merchants/${a.merchantId}/settings`, { session_lifetime_seconds: 10 })).status).toBe(
      400,
    );
    expect((await h.call(h.operator, 'POST', `/api/merchants/${a.merchantId}/settings`, {})).status).toBe(400);
    expect(
      (await h.call(h.merchantUser(a.merchantId), 'POST', `/api/merchants/${a.merchantId}/settings`, { underpayment_tolerance_bps: 5 }))
        .status,
    ).toBe(403);
    const m0 = await h.t.db
      .selectFrom('merchants')
      .select(['session_lifetime_seconds', 'underpayment_tolerance_bps'])
      .where('id', '=', a.merchantId)
      .executeTakeFirstOrThrow();
    expect(m0.session_lifetime_seconds).toBeNull();
    const r = await h.call(h.operator, 'POST', `/api/merchants/${a.merchantId}/settings`, {
      session_lifetime_seconds: 600,
      underpayment_tolerance_bps: 25,
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ session_lifetime_seconds: 600, session_lifetime_source: 'merchant', underpayment_tolerance_bps: 25 });
    expect((await audits('merchant.update')).at(-1)).toMatchObject({
      object_id: a.merchantId,
      before: { session_lifetime_seconds: null, underpayment_tolerance_bps: m0.underpayment_tolerance_bps },
      after: { session_lifetime_seconds: 600, underpayment_tolerance_bps: 25 },
    });
    const back = await h.call(h.operator, 'POST', `/api/merchants/${a.merchantId}/settings`, { session_lifetime_seconds: null });
    expect(back.json).toMatchObject({ session_lifetime_seconds: 1800, session_lifetime_source: 'default' });
  });
});
