import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { Db } from '../db/database.js';
import type { ReadDb } from '../db/read-db.js';
import type { TokenDecimals } from '../domain/chain-lookup.js';
import { EXPORT_KIND_NAMES } from '../ledger/exports/exports.js';
import { isExportFormat, isExportKind, parseExportTime, runExport } from '../operations/exports.js';
import { UsageError, options } from './args.js';

// `export <kind> --since <time> [--until <time>] [--format csv|json] [--merchant <id> --mode test|live] > file`
// (issue 16 item 6; docs/operations.md "Exports"). The file goes to stdout, streamed: memory stays flat whatever the
// number of rows; a summary line goes to stderr. A face over src/operations/exports.ts (the console's downloads).

export const EXPORT_USAGE = `export <${EXPORT_KIND_NAMES.join('|')}> --since <ISO time> [--until <ISO time>] [--format csv|json]
       [--merchant <id> --mode test|live]      rows of the period [since, until), oldest first, to stdout`;

export interface ExportCliContext {
  db: Db;
  /** The reporting reads' handle (READ_DATABASE_URL); absent: the export reads `db`. */
  reads?: ReadDb;
  tokenDecimals: TokenDecimals;
  stdout?: Writable;
  stderr?: (line: string) => void;
  pageRows?: number;
}

export async function exportCli(args: string[], ctx: ExportCliContext): Promise<number> {
  const { values, positionals } = options(args, {
    since: { type: 'string' },
    until: { type: 'string' },
    format: { type: 'string' },
    merchant: { type: 'string' },
    mode: { type: 'string' },
  });
  const kind = positionals[0];
  if (!kind || positionals.length > 1 || !isExportKind(kind)) throw new UsageError(EXPORT_USAGE);
  const format = values.format ?? 'csv';
  if (!isExportFormat(format)) throw new UsageError('--format must be csv or json');
  const since = parseTime(values.since, 'since');
  const until = values.until === undefined ? new Date() : parseTime(values.until, 'until');
  if (until <= since) throw new UsageError('--until must be after --since');
  if ((values.merchant === undefined) !== (values.mode === undefined)) throw new UsageError('--merchant and --mode go together');
  if (values.mode !== undefined && values.mode !== 'test' && values.mode !== 'live') throw new UsageError('--mode must be test or live');
  const out = ctx.stdout ?? process.stdout;
  const write = async (chunk: string | Uint8Array) => {
    if (chunk.length > 0 && !out.write(chunk)) await once(out, 'drain');
  };
  const merchant = values.merchant !== undefined ? { id: values.merchant, mode: values.mode as 'test' | 'live' } : undefined;
  const n = await runExport(ctx, { kind, format, since, until, merchant }, ctx.tokenDecimals, write, ctx.pageRows);
  (ctx.stderr ?? ((l: string) => process.stderr.write(l)))(
    `exported ${n} ${kind} from ${since.toISOString()} to ${until.toISOString()} as ${format}\n`,
  );
  return n;
}

function parseTime(text: string | undefined, name: string): Date {
  if (text === undefined) throw new UsageError(`--${name} is required (ISO time, e.g. 2026-11-01 or 2026-11-01T00:00:00Z)`);
  const d = parseExportTime(text);
  if (d === 'shape') {
    throw new UsageError(`--${name} must be a date (2026-11-01, UTC) or an ISO time with its zone (2026-11-01T00:00:00Z)`);
  }
  if (d === 'invalid') throw new UsageError(`--${name} is not a valid time`);
  return d;
}
