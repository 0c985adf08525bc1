import { sql } from 'kysely';
import pg from 'pg';
import type { Db } from '../../src/db/database.js';

// The query-plan tests' machinery (db-query-plans, console-query-plans): every statement a traced call sends is
// recorded at the driver (pg.Client#query) with its parameters, then EXPLAINed with them; a sequential scan of a table
// holding more than a few thousand rows is an offender, named with its label and its SQL.

interface Captured {
  route: string;
  text: string;
  values: unknown[];
}

type Query = (...args: unknown[]) => unknown;

export interface QueryRecorder {
  /** Runs `call` with the statements it sends recorded under `label` (each distinct text once). */
  traced<T>(label: string, call: () => Promise<T>): Promise<T>;
  captured(): Captured[];
  /** Puts pg.Client#query back. */
  restore(): void;
}

export function recordQueries(): QueryRecorder {
  const captured = new Map<string, Captured>();
  let route: string | null = null;
  const original = pg.Client.prototype.query as unknown as Query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [text, values] = args;
    if (route !== null && typeof text === 'string' && !captured.has(text)) {
      captured.set(text, { route, text, values: Array.isArray(values) ? values : [] });
    }
    return original.apply(this, args);
  } as unknown as typeof pg.Client.prototype.query;
  return {
    async traced(label, call) {
      route = label;
      try {
        return await call();
      } finally {
        route = null;
      }
    },
    captured: () => [...captured.values()],
    restore() {
      pg.Client.prototype.query = original as unknown as typeof pg.Client.prototype.query;
    },
  };
}

/** The tables the planner believes hold more than `minRows` rows (run `analyze` first). */
export async function largeTables(db: Db, minRows: number): Promise<Set<string>> {
  const { rows } = await sql<{ relname: string }>`select relname from pg_class
    where relkind = 'r' and relnamespace = 'public'::regnamespace and reltuples > ${minRows}`.execute(db);
  return new Set(rows.map((r) => r.relname));
}

function seqScans(plan: unknown, large: ReadonlySet<string>, out: string[] = []): string[] {
  if (Array.isArray(plan)) for (const p of plan) seqScans(p, large, out);
  else if (plan && typeof plan === 'object') {
    const node = plan as Record<string, unknown>;
    if (node['Node Type'] === 'Seq Scan' && large.has(String(node['Relation Name']))) out.push(String(node['Relation Name']));
    for (const v of Object.values(node)) if (typeof v === 'object') seqScans(v, large, out);
  }
  return out;
}

/** An export's query runs inside `declare … cursor for <select>`: its select is planned like any other. */
const CURSOR_QUERY = /^\s*declare\s+\w+\s+no\s+scroll\s+cursor\s+for\s+/i;

/** The recorded statements `kinds` matches (e.g. /^\s*(select|with)\b/i), cursor declarations unwrapped. */
export function explainable(recorded: Captured[], kinds: RegExp): Captured[] {
  return recorded.map((c) => ({ ...c, text: c.text.replace(CURSOR_QUERY, '') })).filter((c) => kinds.test(c.text));
}

/** EXPLAINs each statement with its parameters; answers one line per statement that scans a large table. */
export async function seqScanOffenders(url: string, statements: Captured[], large: ReadonlySet<string>): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const offenders: string[] = [];
  try {
    for (const c of statements) {
      const { rows } = await client.query<{ 'QUERY PLAN': unknown }>(`explain (format json) ${c.text}`, c.values);
      const scans = seqScans(rows[0]!['QUERY PLAN'], large);
      if (scans.length > 0) offenders.push(`${c.route}: Seq Scan on ${[...new Set(scans)].join(', ')}\n    ${c.text.replace(/\s+/g, ' ')}`);
    }
  } finally {
    await client.end();
  }
  return offenders;
}
