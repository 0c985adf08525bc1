import type { ReplicaPolicy } from '../db/read-db.js';
import type { Mode } from '../db/schema.js';
import type { TokenDecimals } from '../domain/chain-lookup.js';
import { EXPORT_FORMATS, exportEncoder, type ExportFormat } from '../domain/export-format.js';
import { writeExport } from '../ledger/exports/export-writer.js';
import { EXPORT_KIND_NAMES, exportColumns, type ExportKindName } from '../ledger/exports/exports.js';
import { reportingRead, type ReportingSource } from './reporting.js';

// Accounting exports (docs/operations.md "Exports"): one kind's rows of a period [since, until), oldest first, as CSV
// or JSON, streamed page by page (memory stays flat). The CLI (`export`) writes them to stdout, the console as a
// download: the same bytes. Each face words the refusals of checkExportRequest its own way.

export interface ExportRequest {
  kind: ExportKindName;
  format: ExportFormat;
  since: Date;
  until: Date;
  /** One merchant and mode; absent: every merchant (operators only). */
  merchant?: { id: string; mode: Mode } | undefined;
}

export const isExportKind = (k: string): k is ExportKindName => (EXPORT_KIND_NAMES as readonly string[]).includes(k);
export const isExportFormat = (f: string): f is ExportFormat => (EXPORT_FORMATS as readonly string[]).includes(f);

/**
 * A period bound: a date alone is midnight UTC; a time must name its zone (no silent local time). 'shape' when the
 * text is neither, 'invalid' when it looks right but names no real time.
 */
export function parseExportTime(text: string): Date | 'shape' | 'invalid' {
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(text)) return 'shape';
  const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
  return Number.isNaN(d.getTime()) ? 'invalid' : d;
}

/** The file name of a download, e.g. `sessions-2026-11-01-2026-12-01.csv`. */
export function exportFileName(r: ExportRequest): string {
  const day = (d: Date) => d.toISOString().slice(0, 10);
  const who = r.merchant ? `-${r.merchant.id}-${r.merchant.mode}` : '';
  return `${r.kind}${who}-${day(r.since)}-${day(r.until)}.${r.format}`;
}

export const exportContentType = (r: ExportRequest): string => exportEncoder(r.format, exportColumns(r.kind)).contentType;

/**
 * Writes the export through `write` (which should wait while its destination is full); answers the row count. A
 * reporting read: on the read replica when there is one (docs/deploy.md "Read replica"), else the primary; `policy`
 * says what a replica that is down means (the primary, or `replica_unavailable`).
 */
export function runExport(
  src: ReportingSource,
  r: ExportRequest,
  tokenDecimals: TokenDecimals,
  write: (chunk: string | Uint8Array) => Promise<void>,
  pageRows?: number,
  policy: ReplicaPolicy = 'fallback',
): Promise<number> {
  return reportingRead(
    src,
    (db) =>
      writeExport(
        db,
        {
          kind: r.kind,
          format: r.format,
          filter: { since: r.since, until: r.until, ...(r.merchant ? { merchant: r.merchant } : {}) },
          ctx: { tokenDecimals },
          ...(pageRows !== undefined ? { pageRows } : {}),
        },
        write,
      ),
    policy,
  );
}
