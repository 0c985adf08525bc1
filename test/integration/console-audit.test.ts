import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendAudit } from '../../src/ledger/audit/audit-log.js';
import { type ConsoleApp, startConsoleApp } from '../support/console-auth-app.js';

// The audit log: append-only for the application's database role (UPDATE, DELETE and TRUNCATE refused by its
// triggers), and the audit page's API (filters, keyset pages, a merchant user sees its merchant's rows only).

let c: ConsoleApp;
let op: Awaited<ReturnType<ConsoleApp['operator']>>;
beforeAll(async () => {
  c = await startConsoleApp();
  op = await c.operator();
}, 60_000);
afterAll(async () => c?.close());

describe('the audit table is append-only', () => {
  it('refuses UPDATE, DELETE and TRUNCATE and keeps every row', async () => {
    await appendAudit(c.t.db, { kind: 'cli', id: 'root' }, { action: 'test.append', objectType: 'probe', objectId: 'p1' });
    const count = async () => Number((await sql<{ n: string }>`select count(*) as n from console_audit`.execute(c.t.db)).rows[0]!.n);
    const before = await count();
    await expect(sql`update console_audit set action = 'tampered' where object_id = 'p1'`.execute(c.t.db)).rejects.toThrow(/append-only/);
    await expect(sql`delete from console_audit where object_id = 'p1'`.execute(c.t.db)).rejects.toThrow(/append-only/);
    await expect(sql`truncate console_audit`.execute(c.t.db)).rejects.toThrow(/append-only/);
    expect(await count()).toBe(before);
    const row = await c.t.db.selectFrom('console_audit').select('action').where('object_id', '=', 'p1').executeTakeFirstOrThrow();
    expect(row.action).toBe('test.append');
  });
});

describe('GET /api/audit', () => {
  it("shows an operator every row with filters and keyset pages; a merchant user only its merchant's", async () => {
    const m1 = await c.merchant();
    const m2 = await c.merchant();
    for (const [m, i] of [
      [m1, 1],
      [m1, 2],
      [m1, 3],
      [m2, 4],
    ] as const) {
      await appendAudit(
        c.t.db,
        { kind: 'cli', id: 'ops' },
        { action: 'refund.create', objectType: 'refund', objectId: `re_${i}`, merchantId: m },
      );
    }
    const all = await c.call('GET', '/audit?action=refund.create&limit=100', op);
    expect(all.status).toBe(200);
    expect(all.json.data.map((r: { object_id: string }) => r.object_id)).toEqual(['re_4', 're_3', 're_2', 're_1']);
    expect(all.json.data[0]).toMatchObject({ actor_kind: 'cli', actor_id: 'ops', merchant_id: m2, object_type: 'refund' });
    expect(all.json.data[0].at).toMatch(/^\d{4}-\d\d-\d\dT/);

    const p1 = await c.call('GET', `/audit?merchant_id=${m1}&limit=2`, op);
    expect(p1.json.data.map((r: { object_id: string }) => r.object_id)).toEqual(['re_3', 're_2']);
    expect(p1.json.next_cursor).toMatch(/^\d+$/);
    const p2 = await c.call('GET', `/audit?merchant_id=${m1}&limit=2&cursor=${p1.json.next_cursor}`, op);
    expect(p2.json.data.map((r: { object_id: string }) => r.object_id)).toEqual(['re_1']);
    expect(p2.json.next_cursor).toBeNull();

    const future = await c.call('GET', `/audit?from=${encodeURIComponent(new Date(Date.now() + 3600_000).toISOString())}`, op);
    expect(future.json.data).toEqual([]);
    const byObject = await c.call('GET', '/audit?object_type=refund&object_id=re_2', op);
    expect(byObject.json.data).toHaveLength(1);
    const byActor = await c.call('GET', `/audit?actor_id=${op.id}&action=auth.totp_enroll`, op);
    expect(byActor.json.data).toHaveLength(1);

    const mu = await c.user('merchant', m1);
    const l = await c.login(mu.email, mu.password);
    const s = { cookie: l.cookie!, csrf: l.json.csrf_token as string };
    const own = await c.call('GET', '/audit?limit=100', s);
    expect(own.status).toBe(200);
    expect(own.json.data.length).toBeGreaterThanOrEqual(4);
    expect(own.json.data.every((r: { merchant_id: string }) => r.merchant_id === m1)).toBe(true);
    const other = await c.call('GET', `/audit?merchant_id=${m2}`, s);
    expect(other.status).toBe(403);
    expect(other.json.error.code).toBe('not_permitted');
  });

  it('refuses bad filters with 400', async () => {
    for (const q of ['limit=101', 'cursor=abc', 'from=yesterday', 'bogus=1']) {
      const r = await c.call('GET', `/audit?${q}`, op);
      expect(r.status, q).toBe(400);
    }
  });
});
