import type { Db } from '../../db/database.js';
import { exportEncoder, type ExportFormat } from '../../domain/export-format.js';
import { exportColumns, streamExport, type ExportContext, type ExportFilter, type ExportKindName } from './exports.js';

/**
 * Writes one export, page by page, through `write` (which should wait while its destination is full: that is what
 * keeps memory flat). Answers the number of rows written.
 */
export async function writeExport(
  db: Db,
  o: { kind: ExportKindName; format: ExportFormat; filter: ExportFilter; ctx: ExportContext; pageRows?: number },
  write: (chunk: string | Uint8Array) => Promise<void>,
): Promise<number> {
  const enc = exportEncoder(o.format, exportColumns(o.kind));
  await write(enc.start());
  const n = await streamExport(db, o.kind, o.filter, o.ctx, (rows) => write(enc.page(rows)), o.pageRows);
  await write(enc.end());
  return n;
}
