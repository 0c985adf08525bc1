import { z } from 'zod';

// The console's exports area: GET /api/exports/:kind?format=csv|json&from&to&merchant_id&mode, a streamed download
// (Content-Disposition: attachment) with the bytes the CLI's `export` writes. `from` is required, `to` defaults to
// now; a merchant's export names its mode (test|live). Merchant users: their merchant only (merchant_id implied).

/** The kinds (src/ledger/exports/exports.ts EXPORT_KIND_NAMES), in the CLI's order. */
export const CONSOLE_EXPORT_KINDS = ['sessions', 'payments', 'refunds', 'invoices', 'charges', 'sweeps', 'fees'] as const;
export type ConsoleExportKind = (typeof CONSOLE_EXPORT_KINDS)[number];
export const CONSOLE_EXPORT_FORMATS = ['csv', 'json'] as const;

/** The query of a download (all strings in the URL). */
export const exportQuerySchema = z.strictObject({
  format: z.enum(CONSOLE_EXPORT_FORMATS).optional(),
  /** A date (UTC midnight) or an ISO time with its zone; the period is [from, to). */
  from: z.string(),
  to: z.string().optional(),
  merchant_id: z.string().optional(),
  mode: z.enum(['test', 'live']).optional(),
});
export type ExportQuery = z.infer<typeof exportQuerySchema>;
