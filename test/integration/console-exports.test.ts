import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportCli } from '../../src/cli/export.js';
import { startConsoleHarness, type ConsoleHarness } from '../support/console-harness.js';

// The console's exports over a real database: a download (Content-Disposition attachment) with the very bytes the
// CLI's `export` writes; merchant users get their merchant's rows only; bad input is refused.

let h: ConsoleHarness;
let a: { merchantId: string };
let b: { merchantId: string };

async function sessions(merchantId: string, n: number, prefix: string) {
  await sql`
    insert into payment_sessions (id, merchant_id, mode, order_id, amount_minor, currency, description, metadata,
                                  target_currency, target_amount_minor, hd_account, created_at, expires_at)
    select ${prefix} || i, ${merchantId}, 'test', ${prefix} || 'order-' || i, 1000 + i, 'USD', '=cmd|x', '{}'::jsonb,
           'USDT', 1000 + i, 0, '2026-03-01T00:00:00Z'::timestamptz + (i || ' seconds')::interval,
           '2026-03-01T01:00:00Z'::timestamptz
    from generate_series(1, ${n}) as i`.execute(h.t.db);
}

async function cliBytes(args: string[]): Promise<string> {
  let text = '';
  const stdout = new Writable({
    write(chunk: Buffer, _e, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  await exportCli(args, { db: h.t.db, tokenDecimals: h.ops.chains.tokenDecimals, stdout, stderr: () => {} });
  return text;
}

beforeAll(async () => {
  h = await startConsoleHarness();
  a = await h.merchant('Export A');
  b = await h.merchant('Export B');
  await sessions(a.merchantId, 30, 'cs_expa_');
  await sessions(b.merchantId, 5, 'cs_expb_');
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe('console exports', () => {
  it("an operator's download holds the CLI's bytes, as an attachment", async () => {
    const r = await h.app.inject({
      method: 'GET',
      url: '/api/exports/sessions?from=2026-03-01&to=2026-03-02',
      headers: { 'x-test-actor': h.operator.userId },
    });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/csv/);
    expect(r.headers['content-disposition']).toBe('attachment; filename="sessions-2026-03-01-2026-03-02.csv"');
    const cli = await cliBytes(['sessions', '--since', '2026-03-01', '--until', '2026-03-02']);
    expect(r.body).toBe(cli);
    expect(r.body.trim().split('\r\n')).toHaveLength(1 + 35);
  });

  it("a merchant user's JSON download holds its own merchant's rows only, the CLI's bytes for that merchant and mode", async () => {
    const user = h.merchantUser(b.merchantId);
    const r = await h.app.inject({
      method: 'GET',
      url: '/api/exports/sessions?format=json&from=2026-03-01&to=2026-03-02&mode=test',
      headers: { 'x-test-actor': user.userId },
    });
    expect(r.statusCode).toBe(200);
    const rows = JSON.parse(r.body) as Array<{ merchant_id: string }>;
    expect(rows).toHaveLength(5);
    expect(new Set(rows.map((x) => x.merchant_id))).toEqual(new Set([b.merchantId]));
    const cli = await cliBytes([
      'sessions',
      '--since',
      '2026-03-01',
      '--until',
      '2026-03-02',
      '--format',
      'json',
      '--merchant',
      b.merchantId,
      '--mode',
      'test',
    ]);
    expect(r.body).toBe(cli);
  });

  it("refuses another merchant's export (403) and bad input (400)", async () => {
    const user = h.merchantUser(b.merchantId);
    const get = async (url: string, who = user) => (await h.call(who, 'GET', url)).status;
    expect(await get(`/api/exports/sessions?from=2026-03-01&mode=test&merchant_id=${a.merchantId}`)).toBe(403);
    expect(await get('/api/exports/sessions?from=2026-03-01')).toBe(400); // a merchant's export names its mode
    expect(await get('/api/exports/ledger?from=2026-03-01&mode=test')).toBe(400);
    expect(await get('/api/exports/sessions?from=2026-03-01T00:00&mode=test')).toBe(400);
    expect(await get('/api/exports/sessions?from=2026-03-02&to=2026-03-01&mode=test')).toBe(400);
    expect(await get('/api/exports/sessions?from=2026-03-01&format=xml&mode=test')).toBe(400);
    expect(await get('/api/exports/sessions?from=2026-03-01&mode=test', h.operator)).toBe(400); // mode without a merchant
    expect(await get('/api/exports/sessions?from=2026-03-01', h.operator)).toBe(200);
  });
});
