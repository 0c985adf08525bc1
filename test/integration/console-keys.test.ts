import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveApiKey } from '../../src/ledger/merchants/merchants.js';
import { startConsoleHarness, type ConsoleHarness } from '../support/console-harness.js';

// The console's API keys over a real database: list (never a secret), create (secret once, key works), revoke by
// prefix; merchant users scoped to their merchant; audit rows name the prefix, never the secret.

let h: ConsoleHarness;
let a: Awaited<ReturnType<ConsoleHarness['merchant']>>;
let b: Awaited<ReturnType<ConsoleHarness['merchant']>>;

const audits = (action: string) => h.t.db.selectFrom('console_audit').selectAll().where('action', '=', action).orderBy('id').execute();

beforeAll(async () => {
  h = await startConsoleHarness();
  a = await h.merchant('Keys A');
  b = await h.merchant('Keys B');
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe('console API keys', () => {
  it('creates a live key for its own merchant: the secret once, a working key, an audit row without the secret', async () => {
    const user = h.merchantUser(a.merchantId);
    const r = await h.call(user, 'POST', '/api/keys', { mode: 'live' });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ merchant_id: a.merchantId, mode: 'live', key: expect.stringMatching(/^sk_live_/) });
    expect(r.json.key.startsWith(r.json.prefix)).toBe(true);
    const resolved = await resolveApiKey(h.t.db, h.ops.box, r.json.key);
    expect(resolved?.secret).toBe(r.json.secret);
    const list = await h.call(user, 'GET', '/api/keys');
    expect(list.json.data).toHaveLength(2);
    expect(list.json.data[0]).toMatchObject({ prefix: r.json.prefix, mode: 'live', revoked_at: null, last_used_at: null });
    expect(list.json.data[1]).toMatchObject({ mode: 'test', merchant_id: a.merchantId });
    expect(a.testKey.key.startsWith(list.json.data[1].prefix)).toBe(true);
    expect(JSON.stringify(list.json)).not.toContain(r.json.secret);
    expect(JSON.stringify(list.json)).not.toContain(r.json.key);
    const rows = await audits('api_key.create');
    expect(rows.at(-1)).toMatchObject({
      object_id: r.json.prefix,
      merchant_id: a.merchantId,
      after: { prefix: r.json.prefix, mode: 'live' },
    });
    expect(JSON.stringify(rows.at(-1), (_k, x) => (typeof x === 'bigint' ? String(x) : x))).not.toContain(r.json.secret);
  });

  it('an operator names the merchant; bad input is refused and nothing is created', async () => {
    const before = await h.t.db.selectFrom('api_keys').select('id').execute();
    expect((await h.call(h.operator, 'POST', '/api/keys', { mode: 'test' })).status).toBe(400);
    expect((await h.call(h.operator, 'POST', '/api/keys', { mode: 'prod', merchant_id: b.merchantId })).status).toBe(400);
    expect((await h.call(h.operator, 'POST', '/api/keys', { mode: 'test', merchant_id: 'mch_nope' })).status).toBe(404);
    expect((await h.call(h.merchantUser(a.merchantId), 'POST', '/api/keys', { mode: 'test', merchant_id: b.merchantId })).status).toBe(403);
    expect(await h.t.db.selectFrom('api_keys').select('id').execute()).toHaveLength(before.length);
    const ok = await h.call(h.operator, 'POST', '/api/keys', { mode: 'test', merchant_id: b.merchantId });
    expect(ok.status).toBe(201);
    expect(ok.json.merchant_id).toBe(b.merchantId);
    const all = await h.call(h.operator, 'GET', '/api/keys?limit=1');
    expect(all.json.data).toHaveLength(1);
    expect(all.json.data[0].prefix).toBe(ok.json.prefix);
    expect(all.json.next_cursor).toEqual(expect.any(String));
    const next = await h.call(h.operator, 'GET', `/api/keys?limit=100&cursor=${all.json.next_cursor}`);
    expect(next.json.data.map((k: { prefix: string }) => k.prefix)).not.toContain(ok.json.prefix);
    expect(next.json.data).toHaveLength(3);
  });

  it("revokes by prefix; another merchant's key is refused (403, still active); a revoked key cannot be revoked again", async () => {
    const keyB = await h.call(h.operator, 'POST', '/api/keys', { mode: 'test', merchant_id: b.merchantId });
    const refused = await h.call(h.merchantUser(a.merchantId), 'POST', `/api/keys/${keyB.json.prefix}/revoke`);
    expect(refused.status).toBe(403);
    expect(await resolveApiKey(h.t.db, h.ops.box, keyB.json.key)).toBeDefined();
    const r = await h.call(h.merchantUser(b.merchantId), 'POST', `/api/keys/${keyB.json.prefix}/revoke`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ prefix: keyB.json.prefix, revoked_at: expect.any(String) });
    expect(await resolveApiKey(h.t.db, h.ops.box, keyB.json.key)).toBeUndefined();
    expect((await audits('api_key.revoke')).at(-1)).toMatchObject({ object_id: keyB.json.prefix, merchant_id: b.merchantId });
    expect((await h.call(h.operator, 'POST', `/api/keys/${keyB.json.prefix}/revoke`)).status).toBe(400);
    expect((await h.call(h.operator, 'POST', '/api/keys/sk_test_nope/revoke')).status).toBe(404);
    expect((await h.call(h.operator, 'POST', '/api/keys/bad%20prefix/revoke')).status).toBe(400);
  });
});
