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

/** The pieces of a streamed export: its start, one chunk per page of rows, and its end. */
export interface ExportEncoder {
  contentType: string;
  start(): string;
  page(rows: readonly (readonly Value[])[]): string;
  end(): string;
}

export function exportEncoder(format: ExportFormat, columns: readonly string[]): ExportEncoder {
  if (format === 'csv') {
    return {
      contentType: 'text/csv; charset=utf-8',
      start: () => csvLine(columns),
      page: (rows) => {
        let text = '';
        for (const r of rows) text += csvLine(r);
        return text;
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
