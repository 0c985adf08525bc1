import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../src/db/database.js';
import { isoFromTimestamptzText } from '../../src/db/timestamptz-text.js';
import { PG_ADMIN_URL } from '../support/env.js';

// The exports read timestamps as text (`::text`) and rewrite them without a Date (src/db/timestamptz-text.ts): the
// string must be the one pg's own parsing into a Date and `toISOString()` gave (the export's bytes before), for every
// value PostgreSQL can print: microseconds (truncated to milliseconds, never rounded), day, month and year boundaries,
// sessions in other time zones (offsets with minutes and seconds), BC dates, years past 9999, and infinity.
let client: pg.Client;
beforeAll(async () => {
  client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
});
afterAll(async () => client?.end());

const EDGES = [
  '2026-11-29 23:59:59.999999+00',
  '2026-11-29 23:59:59.9995+00',
  '2026-11-30 00:00:00+00',
  '2026-11-30 00:00:00.000001+00',
  '2026-11-30 00:00:00.0009+00',
  '2026-11-30 00:00:00.001+00',
  '2026-11-30 00:00:00.45+00',
  '2026-11-30 00:00:00.5+00',
  '2026-12-31 23:59:59.999999+00',
  '2027-01-01 00:00:00.000999+00',
  '2028-02-29 12:00:00.123456+00',
  '2026-11-29 23:30:00.999999-01',
  '2026-11-30 05:29:59.999999+05:30',
  '1900-01-01 00:00:00.000001+00',
  '0099-06-01 00:00:00.25+00',
  '0001-01-01 00:00:00+00',
  '0044-03-15 12:00:00.5+00 BC',
  '10000-01-01 00:00:00.5+00',
  '1800-01-01 00:00:00.123456+00',
  'infinity',
  '-infinity',
];
const ZONES = ['UTC', 'Asia/Kolkata', 'America/St_Johns', 'Europe/Amsterdam', 'Pacific/Chatham', 'America/Los_Angeles'];

/** Each value as PostgreSQL prints it in `zone` and as pg parses it (the default timestamptz parser, the export's before). */
async function read(zone: string, values: string[]): Promise<Array<{ text: string; before: string | number | null }>> {
  await client.query(`set time zone '${zone}'`);
  const { rows } = await client.query<{ text: string; value: Date | number }>(
    'select v::text as text, v as value from unnest($1::timestamptz[]) with ordinality u(v, i) order by i',
    [values],
  );
  return rows.map((r) => ({ text: r.text, before: r.value instanceof Date ? r.value.toISOString() : r.value }));
}

describe('isoFromTimestamptzText', () => {
  it('gives the string the Date round trip gave, at the edges and in every session time zone', async () => {
    for (const zone of ZONES) {
      const rows = await read(zone, EDGES);
      expect(rows.length).toBe(EDGES.length);
      for (const r of rows) expect([zone, r.text, isoFromTimestamptzText(r.text)]).toEqual([zone, r.text, r.before]);
    }
    expect(isoFromTimestamptzText('2026-11-29 23:59:59.999999+00')).toBe('2026-11-29T23:59:59.999Z');
    expect(isoFromTimestamptzText(null)).toBeNull();
  });

  it('gives the same string for 20,000 random microsecond timestamps around day boundaries', async () => {
    await client.query(`set time zone 'UTC'`);
    const { rows } = await client.query<{ text: string; value: Date }>(
      `select v::text as text, v as value from (
         select timestamptz '2026-01-01 00:00:00+00' + (i % 400) * interval '1 day' + (random() * 2 - 1) * interval '2 seconds' as v
         from generate_series(1, 20000) i) s`,
    );
    let mismatches = 0;
    for (const r of rows) if (isoFromTimestamptzText(r.text) !== r.value.toISOString()) mismatches++;
    expect(rows.length).toBe(20000);
    expect(rows.filter((r) => /\.\d{4,6}\+00$/.test(r.text)).length).toBeGreaterThan(19000);
    expect(mismatches).toBe(0);
  });
});
