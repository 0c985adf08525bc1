// Export file formats (docs/operations.md "Exports"). CSV follows RFC 4180: comma-separated, CRLF line ends, a field
// holding a comma, a double quote, CR or LF is quoted with its quotes doubled; null is an empty field. A text field
// starting with =, +, -, @, tab or CR gets a leading apostrophe so a spreadsheet never runs it as a formula (OWASP
// "CSV injection"); amounts and ids never start with one. JSON is one array of objects, written row by row.

export type ExportFormat = 'csv' | 'json';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['csv', 'json'];
type Value = string | number | boolean | null;

const NEEDS_QUOTES = /[",\r\n]/;
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvField(v: Value): string {
  if (v === null) return '';
  // A number or boolean prints without a comma, quote, line break or formula sign.
  if (typeof v !== 'string') return String(v);
  const text = FORMULA_START.test(v) ? `'${v}` : v;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

// Built by appending (no intermediate arrays): an export writes a page of a thousand lines per call.
export function csvLine(values: readonly Value[]): string {
  let line = '';
  for (let i = 0; i < values.length; i++) line += i === 0 ? csvField(values[i]!) : `,${csvField(values[i]!)}`;
  return `${line}\r\n`;
}

/** A piece of an export as written: text, or the UTF-8 bytes of a page of CSV. */
export type ExportChunk = string | Uint8Array;

/** The pieces of a streamed export: its start, one chunk per page of rows, and its end. */
export interface ExportEncoder {
  contentType: string;
  start(): string;
  page(rows: readonly (readonly Value[])[]): ExportChunk;
  end(): string;
}

/** Writes `text` as UTF-8 at `at` (room checked by the caller); answers the end. ASCII byte by byte: a call to
 * Buffer#write per field costs more than the loop for the short ids, hashes and digits of an export. */
function putText(buf: Buffer, at: number, text: string): number {
  const n = text.length;
  for (let j = 0; j < n; j++) {
    const c = text.charCodeAt(j);
    // The rest from the first non-ASCII unit on (never inside a surrogate pair: everything before it is ASCII).
    if (c >= 0x80) return at + j + buf.write(text.slice(j), at + j);
    buf[at + j] = c;
  }
  return at + n;
}

/**
 * Writes a text field that csvField leaves as it is and that is ASCII (no formula sign first, no comma, quote, CR or
 * LF: what ids, hashes, addresses and digits are) at `at`, byte by byte; answers the end, or -1 when the field needs
 * csvField (what it wrote then is overwritten). The same bytes as csvField's text, without its two regexes.
 */
function putPlainAscii(buf: Buffer, at: number, text: string): number {
  const n = text.length;
  if (n > 0) {
    const c = text.charCodeAt(0);
    if (c === 0x3d || c === 0x2b || c === 0x2d || c === 0x40 || c === 0x09 || c === 0x0d) return -1;
  }
  for (let j = 0; j < n; j++) {
    const c = text.charCodeAt(j);
    if (c >= 0x80 || c === 0x22 || c === 0x2c || c === 0x0d || c === 0x0a) return -1;
    buf[at + j] = c;
  }
  return at + n;
}

/** `buf` with room for `need` more bytes at `at` (a copy twice as large, or larger, when it has not). */
function room(buf: Buffer, at: number, need: number): Buffer {
  if (at + need <= buf.length) return buf;
  const bigger = Buffer.allocUnsafe(Math.max(buf.length * 2, at + need));
  buf.copy(bigger, 0, 0, at);
  return bigger;
}

/**
 * The UTF-8 bytes of the CSV lines of `rows` (the bytes of their csvLine strings, concatenated), written field by field
 * into one buffer: a page's text built by appending is a string of ~35,000 pieces that costs more to flatten into
 * bytes than to build (docs/performance.md "Export"). `bytesPerRow`: the first guess of the size; the buffer grows.
 */
export function csvPageBytes(rows: readonly (readonly Value[])[], bytesPerRow: number): Uint8Array {
  let buf: Buffer = Buffer.allocUnsafe(Math.max(1024, Math.ceil(bytesPerRow * rows.length)));
  let at = 0;
  for (const r of rows) {
    for (let i = 0; i < r.length; i++) {
      const v = r[i]!;
      // A comma, the field (at most 3 bytes per UTF-16 unit), and the line end.
      if (typeof v === 'string') buf = room(buf, at, v.length * 3 + 3);
      if (i > 0) buf[at++] = 0x2c;
      if (typeof v === 'string') {
        const end = putPlainAscii(buf, at, v);
        if (end >= 0) {
          at = end;
          continue;
        }
      }
      const text = csvField(v);
      buf = room(buf, at, text.length * 3 + 2);
      at = putText(buf, at, text);
    }
    buf = room(buf, at, 2);
    buf[at++] = 0x0d;
    buf[at++] = 0x0a;
  }
  return buf.subarray(0, at);
}

export function exportEncoder(format: ExportFormat, columns: readonly string[]): ExportEncoder {
  if (format === 'csv') {
    // Each page's first guess of its size is the last page's bytes per row (a quarter more): one buffer per page.
    let bytesPerRow = 256;
    return {
      contentType: 'text/csv; charset=utf-8',
      start: () => csvLine(columns),
      page: (rows) => {
        const bytes = csvPageBytes(rows, bytesPerRow);
        if (rows.length > 0) bytesPerRow = (bytes.length / rows.length) * 1.25 + 8;
        return bytes;
      },
      end: () => '',
    };
  }
  let first = true;
  return {
    contentType: 'application/json; charset=utf-8',
    start: () => '[',
    page: (rows) =>
      rows
        .map((r) => {
          const o: Record<string, Value> = {};
          columns.forEach((c, i) => {
            o[c] = r[i] ?? null;
          });
          const text = `${first ? '\n' : ',\n'}${JSON.stringify(o)}`;
          first = false;
          return text;
        })
        .join(''),
    end: () => (first ? ']\n' : '\n]\n'),
  };
}
