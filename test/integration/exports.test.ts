import { Writable } from 'node:stream';
import v8 from 'node:v8';
import vm from 'node:vm';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportCli } from '../../src/cli/export.js';
import { csvField } from '../../src/domain/export-format.js';
import { exportColumns } from '../../src/ledger/exports/exports.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { markSessionPaid } from '../support/paid-session.js';

// Accounting exports (issue 16 item 6): streamed through a server-side cursor, so memory stays flat however many rows
// a period holds; CSV per RFC 4180 (and no formula injection), JSON as one array.
let h: ApiHarness;
let shop: Awaited<ReturnType<ApiHarness['merchant']>>;
let other: Awaited<ReturnType<ApiHarness['merchant']>>;
const BULK = 120_000;
const decimals = (_n: string, _m: string, t: string) => (t === 'USDT' || t === 'USDC' ? 6 : undefined);

beforeAll(async () => {
  h = await startApiHarness();
  shop = await h.merchant('Exporter');
  other = await h.merchant('Someone else');
});
afterAll(async () => h?.close());

/** Inserts `n` sessions of a merchant created at `start` + i ms, each with a 200-character description. */
async function bulkSessions(merchantId: string, n: number, start: string, prefix: string) {
  await sql`
    insert into payment_sessions (id, merchant_id, mode, order_id, amount_minor, currency, description, metadata,
                                  target_currency, target_amount_minor, hd_account, created_at, expires_at)
    select ${prefix} || i, ${merchantId}, 'test', ${prefix} || 'order-' || i, 1000 + i, 'USD', repeat('d', 200),
           jsonb_build_object('n', i::text), 'USDT', 1000 + i, 0,
           ${start}::timestamptz + (i || ' milliseconds')::interval, ${start}::timestamptz + interval '1 hour'
    from generate_series(1, ${n}) as i`.execute(h.t.db);
}

/** A sink that keeps only a byte count and the last bytes, draining slowly enough to exercise backpressure. */
function countingSink(onWrite?: (bytes: number) => void) {
  let bytes = 0;
  let head = '';
  let tail = '';
  const stream = new Writable({
    highWaterMark: 64 * 1024,
    write(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (head.length < 4096) head += chunk.toString('utf8').slice(0, 4096);
      tail = (tail + chunk.toString('utf8')).slice(-4096);
      onWrite?.(bytes);
      setImmediate(done);
    },
  });
  return { stream, bytes: () => bytes, head: () => head, tail: () => tail };
}

/** Minimal RFC 4180 reader for the test's own checks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  if (field !== '' || row.length) rows.push([...row, field]);
  return rows;
}

describe('exports', () => {
  it(`streams ${BULK} sessions as CSV with memory growth far below the data size`, async () => {
    await bulkSessions(shop.merchantId, BULK, '2026-01-01T00:00:00Z', 'cs_bulk_');
    // Live memory after a full GC, sampled while the export runs: what the process holds, not garbage not yet collected.
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const live = () => {
      gc();
      const m = process.memoryUsage();
      return m.heapUsed + m.external;
    };
    const sink = countingSink((written) => {
      if (written - lastSample >= 2_000_000) {
        lastSample = written;
        samples++;
        peakLive = Math.max(peakLive, live());
        peakRss = Math.max(peakRss, process.memoryUsage().rss);
      }
    });
    let lastSample = 0;
    let samples = 0;
    const baseLive = live();
    const baseRss = process.memoryUsage().rss;
    let peakLive = baseLive;
    let peakRss = baseRss;
    const n = await exportCli(['sessions', '--since', '2026-01-01', '--until', '2026-01-02', '--format', 'csv'], {
      db: h.t.db,
      tokenDecimals: decimals,
      stdout: sink.stream,
      stderr: () => {},
    });
    expect(n).toBe(BULK);
    const dataBytes = sink.bytes();
    const growth = peakLive - baseLive;
    console.log(
      `export: ${n} rows, ${(dataBytes / 1e6).toFixed(1)} MB written, live memory growth ${(growth / 1e6).toFixed(1)} MB ` +
        `(RSS growth ${((peakRss - baseRss) / 1e6).toFixed(1)} MB, garbage included), ${samples} samples`,
    );
    expect(dataBytes).toBeGreaterThan(40e6);
    expect(samples).toBeGreaterThan(10);
    // Rows held in memory would cost more than the CSV itself; a streamed export holds a page or two (about 5 MB here
    // for 45 MB written), and the process RSS grows by far less than the data too.
    expect(growth).toBeLessThan(dataBytes / 4);
    expect(peakRss - baseRss).toBeLessThan(dataBytes / 2);
    const header = sink.head().split('\r\n')[0]!;
    expect(header.startsWith('id,merchant_id,mode,order_id,status,amount,currency,')).toBe(true);
    const first = parseCsv(sink.head())[1]!;
    expect(first.slice(0, 7)).toEqual(['cs_bulk_1', shop.merchantId, 'test', 'cs_bulk_order-1', 'open', '10.01', 'usd']);
    expect(sink.tail().endsWith(`\r\n`)).toBe(true);
    expect(sink.tail()).toContain(`cs_bulk_${BULK},`);
  }, 300_000);

  it('escapes CSV (quotes, commas, line breaks, formulas) and writes JSON that parses to the same values', async () => {
    const tricky = ['say "hi", then\r\nleave', '=HYPERLINK("http://x")', '+1', 'plain', 'ünïcode, ok', '-2', '@SUM(A1)'];
    for (const [i, d] of tricky.entries()) {
      await sql`
        insert into payment_sessions (id, merchant_id, mode, order_id, amount_minor, currency, description, metadata,
                                      target_currency, target_amount_minor, hd_account, created_at, expires_at)
        values (${`cs_tricky_${i}`}, ${shop.merchantId}, 'test', ${`o,"${i}"`}, 250, 'JPY', ${d}, ${JSON.stringify({ note: d })}::jsonb,
                'USDT', 170, 0, ${`2026-03-01T00:00:0${i}Z`}, '2026-03-02T00:00:00Z')`.execute(h.t.db);
    }
    const csvSink = countingSink();
    await exportCli(['sessions', '--since', '2026-03-01', '--until', '2026-03-02'], {
      db: h.t.db,
      tokenDecimals: decimals,
      stdout: csvSink.stream,
      stderr: () => {},
    });
    const rows = parseCsv(csvSink.head());
    const header = rows[0]!;
    const at = (name: string) => header.indexOf(name);
    expect(rows).toHaveLength(tricky.length + 1);
    const guarded = (d: string) => (/^[=+\-@]/.test(d) ? `'${d}` : d);
    rows.slice(1).forEach((r, i) => {
      expect(r).toHaveLength(header.length);
      expect(r[at('id')]).toBe(`cs_tricky_${i}`);
      expect(r[at('order_id')]).toBe(`o,"${i}"`);
      expect(r[at('description')]).toBe(guarded(tricky[i]!));
      expect(JSON.parse(r[at('metadata')]!)).toEqual({ note: tricky[i] });
      expect(r[at('amount')]).toBe('250'); // JPY has no minor unit
      expect(r[at('target_amount')]).toBe('1.70');
      expect(r[at('paid_at')]).toBe('');
    });
    expect(csvField('a"b')).toBe('"a""b"');
    expect(csvField(null)).toBe('');

    const jsonSink = countingSink();
    await exportCli(['sessions', '--since', '2026-03-01', '--until', '2026-03-02', '--format', 'json'], {
      db: h.t.db,
      tokenDecimals: decimals,
      stdout: jsonSink.stream,
      stderr: () => {},
    });
    const parsed = JSON.parse(jsonSink.head()) as Array<Record<string, unknown>>;
    expect(parsed.map((r) => r.description)).toEqual(tricky);
    expect(parsed[0]).toMatchObject({
      id: 'cs_tricky_0',
      amount: '250',
      currency: 'jpy',
      paid_at: null,
      created_at: '2026-03-01T00:00:00.000Z',
    });

    // The period is [since, until): a row at `until` is not in it; an empty period is a valid empty file.
    const bounded = countingSink();
    const n = await exportCli(['sessions', '--since', '2026-03-01T00:00:01Z', '--until', '2026-03-01T00:00:03Z', '--format', 'json'], {
      db: h.t.db,
      tokenDecimals: decimals,
      stdout: bounded.stream,
      stderr: () => {},
    });
    expect(n).toBe(2);
    expect((JSON.parse(bounded.head()) as Array<{ id: string }>).map((r) => r.id)).toEqual(['cs_tricky_1', 'cs_tricky_2']);
    const empty = countingSink();
    await exportCli(['refunds', '--since', '2020-01-01', '--until', '2020-01-02', '--format', 'json'], {
      db: h.t.db,
      tokenDecimals: decimals,
      stdout: empty.stream,
      stderr: () => {},
    });
    expect(JSON.parse(empty.head())).toEqual([]);
    // The sweeps and fees kinds (their rows: test/integration/journal-sweep.test.ts): a header and no row here.
    for (const kind of ['sweeps', 'fees']) {
      const out = countingSink();
      await exportCli([kind, '--since', '2026-01-01'], { db: h.t.db, tokenDecimals: decimals, stdout: out.stream, stderr: () => {} });
      expect(out.head().split('\r\n')[0]).toBe(exportColumns(kind as 'sweeps' | 'fees').join(','));
    }
    await expect(exportCli(['ledger', '--since', '2026-01-01'], { db: h.t.db, tokenDecimals: decimals })).rejects.toThrow(
      /^export <sessions\|payments/,
    );
    await expect(exportCli(['sessions', '--since', '2026-01-01T00:00'], { db: h.t.db, tokenDecimals: decimals })).rejects.toThrow(
      /with its zone/,
    );
  });

  it('the merchant API streams only its own rows of its mode, and refuses bad parameters without a 5xx', async () => {
    await bulkSessions(other.merchantId, 5, '2026-05-01T00:00:00Z', 'cs_other_');
    await bulkSessions(shop.merchantId, 3, '2026-05-01T00:00:00Z', 'cs_mine_');
    const since = Date.parse('2026-05-01T00:00:00Z') / 1000;
    const csv = await shop.test.get(`/api/v1/exports/sessions?since=${since}&until=${since + 3600}`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toMatch(/attachment; filename="sessions-2026-05-01-2026-05-01\.csv"/);
    const rows = parseCsv(csv.text);
    expect(rows.slice(1).map((r) => r[0])).toEqual(['cs_mine_1', 'cs_mine_2', 'cs_mine_3']);
    const json = await shop.test.get(`/api/v1/exports/sessions?since=${since}&until=${since + 3600}&format=json`);
    expect(json.json.map((r: { id: string }) => r.id)).toEqual(['cs_mine_1', 'cs_mine_2', 'cs_mine_3']);
    const live = await (await shop.live()).get(`/api/v1/exports/sessions?since=${since}&until=${since + 3600}&format=json`);
    expect(live.json).toEqual([]);
    const bad = await shop.test.get(`/api/v1/exports/sessions?since=yesterday`);
    expect(bad.status).toBe(400);
    expect((await shop.test.get(`/api/v1/exports/sessions?since=${since}&until=${since}`)).status).toBe(400);
    expect((await shop.test.get(`/api/v1/exports/sessions?since=${since}&format=xml`)).status).toBe(400);
    expect((await shop.test.get(`/api/v1/exports/sessions?since=${since}&extra=1`)).status).toBe(400);
    expect((await shop.test.get(`/api/v1/exports/secrets?since=${since}`)).status).toBe(404);
    for (const kind of ['payments', 'refunds', 'invoices', 'charges']) {
      const r = await shop.test.get(`/api/v1/exports/${kind}?since=${since}&format=json`);
      expect(r.status).toBe(200);
      expect(r.json).toEqual([]);
    }
  });

  it("payments: each deposit carries its session's merchant (set on insert), and a merchant's export holds its own", async () => {
    await bulkSessions(other.merchantId, 2, '2026-06-01T00:00:00Z', 'cs_pay_other_');
    await bulkSessions(shop.merchantId, 2, '2026-06-01T00:00:00Z', 'cs_pay_mine_');
    const paidAt = new Date('2026-06-01T00:10:00Z');
    for (const id of ['cs_pay_other_1', 'cs_pay_other_2', 'cs_pay_mine_1', 'cs_pay_mine_2'])
      await markSessionPaid(h.t.db, id, { receivedBase: 1_000_000n, paidAt });
    const rows = await h.t.db
      .selectFrom('deposits as d')
      .innerJoin('payment_sessions as s', 's.id', 'd.session_id')
      .select(['d.session_id', 'd.merchant_id', 's.merchant_id as session_merchant'])
      .where('d.session_id', 'like', 'cs_pay_%')
      .execute();
    expect(rows).toHaveLength(4);
    for (const r of rows) expect(r.merchant_id).toBe(r.session_merchant);
    // Times with microseconds, one across midnight: read as text, written as the Date round trip wrote them
    // (milliseconds truncated, UTC).
    await sql`update deposits set block_time = '2026-05-31 23:59:59.999999+00', confirmed_at = '2026-06-01 01:30:00.0009+01:30'
              where session_id = 'cs_pay_mine_1'`.execute(h.t.db);
    const since = Date.parse('2026-06-01T00:00:00Z') / 1000;
    const r = await shop.test.get(`/api/v1/exports/payments?since=${since}&until=${since + 3600}&format=json`);
    expect(r.status).toBe(200);
    type Payment = { session_id: string; merchant_id: string; block_time: string; confirmed_at: string };
    expect((r.json as Payment[]).map((p) => [p.session_id, p.merchant_id]).sort()).toEqual([
      ['cs_pay_mine_1', shop.merchantId],
      ['cs_pay_mine_2', shop.merchantId],
    ]);
    expect((r.json as Payment[]).find((p) => p.session_id === 'cs_pay_mine_1')).toMatchObject({
      block_time: '2026-05-31T23:59:59.999Z',
      confirmed_at: '2026-06-01T00:00:00.000Z',
    });
  });
});
