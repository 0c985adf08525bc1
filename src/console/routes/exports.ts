import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { invalidRequest } from '../../domain/errors.js';
import { exportContentType, exportFileName, parseExportTime, runExport, type ExportRequest } from '../../operations/exports.js';
import { merchantScope } from '../actor.js';
import { CONSOLE_EXPORT_FORMATS, CONSOLE_EXPORT_KINDS } from '../contract/exports.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from '../route.js';

// The console's exports: GET /exports/:kind streams the same bytes as the CLI's `export` as a download, page by page
// (memory stays flat; a slow reader holds the export back). A merchant user downloads its own merchant's rows only.

function time(text: string, param: string): Date {
  const d = parseExportTime(text);
  if (d === 'shape')
    throw invalidRequest('parameter_invalid', `Invalid ${param}: a date (2026-11-01, UTC) or an ISO time with its zone.`, param);
  if (d === 'invalid') throw invalidRequest('parameter_invalid', `Invalid ${param}: not a valid time.`, param);
  return d;
}

/** Resolves once the stream takes more, rejects when the download went away (the export then stops). */
function drained(stream: PassThrough): Promise<void> {
  return new Promise((resolve, reject) => {
    const ok = () => {
      stream.off('close', gone);
      resolve();
    };
    const gone = () => {
      stream.off('drain', ok);
      reject(new Error('the download was closed'));
    };
    stream.once('drain', ok);
    stream.once('close', gone);
  });
}

export async function registerExportRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { db, chains, log } = deps.ops;
  const source = deps.ops;
  consoleRoute(app, db, {
    method: 'GET',
    url: '/exports/:kind',
    summary: 'Download an export (the CLI export of that kind) as a file',
    response: {
      description: 'The rows of the period as a download (Content-Disposition: attachment), streamed page by page.',
      content: {
        'text/csv': { schema: { type: 'string', description: 'CSV with a header row (format=csv, the default).' } },
        'application/json': { schema: { type: 'array', items: { type: 'object' }, description: 'format=json.' } },
      },
    },
    errors: { 400: ['parameter_missing'] },
    params: z.strictObject({ kind: z.enum(CONSOLE_EXPORT_KINDS) }),
    query: z.strictObject({
      format: z.enum(CONSOLE_EXPORT_FORMATS).optional(),
      from: z.string().max(40),
      to: z.string().max(40).optional(),
      merchant_id: z.string().optional(),
      mode: z.enum(['test', 'live']).optional(),
    }),
    async handler({ actor, params, query, reply }) {
      const since = time(query.from, 'from');
      const until = query.to === undefined ? new Date() : time(query.to, 'to');
      if (until <= since) throw invalidRequest('parameter_invalid', 'Invalid to: it must be after from.', 'to');
      const merchantId = merchantScope(actor, query.merchant_id);
      if (merchantId !== undefined && query.mode === undefined)
        throw invalidRequest('parameter_missing', "A merchant's export names its mode (test or live).", 'mode');
      if (merchantId === undefined && query.mode !== undefined)
        throw invalidRequest('parameter_invalid', 'mode goes with merchant_id: an export of every merchant has both modes.', 'mode');
      const r: ExportRequest = {
        kind: params.kind,
        format: query.format ?? 'csv',
        since,
        until,
        merchant: merchantId !== undefined && query.mode !== undefined ? { id: merchantId, mode: query.mode } : undefined,
      };
      const stream = new PassThrough();
      const write = async (chunk: string | Uint8Array) => {
        if (chunk.length > 0 && !stream.write(chunk)) await drained(stream);
      };
      runExport(source, r, chains.tokenDecimals, write).then(
        () => stream.end(),
        (err: unknown) => {
          log.error({ err, kind: r.kind }, 'console export failed');
          stream.destroy(err instanceof Error ? err : new Error(String(err)));
        },
      );
      return reply
        .header('Content-Type', exportContentType(r))
        .header('Content-Disposition', `attachment; filename="${exportFileName(r)}"`)
        .send(stream);
    },
  });
}
