import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Db } from '../../db/database.js';
import type { ReadDb, ReportingDb } from '../../db/read-db.js';
import type { ChainLookup } from '../../domain/chain-lookup.js';
import { EXPORT_FORMATS, exportEncoder } from '../../domain/export-format.js';
import { resourceNotFound, parameterInvalid } from '../../domain/errors.js';
import { EXPORT_KIND_NAMES, exportColumns, streamExport, type ExportKindName } from '../../ledger/exports/exports.js';
import { refuseBadStrings, validate } from '../json-body.js';

// Extension: GET /exports/{kind}?since=&until=&format=csv|json (docs/operations.md "Exports"): the authenticated
// merchant's rows of one kind in the period [since, until) (Unix seconds), in its key's mode, oldest first, streamed.
// Errors before the first byte are the usual JSON errors; a failure mid-stream cuts the body short (no trailing `]`
// in JSON), which a client detects.

const unixSeconds = z
  .string()
  .regex(/^\d{1,11}$/, 'must be Unix seconds')
  .transform((s) => new Date(Number(s) * 1000));
const exportQuery = z.strictObject({
  since: unixSeconds,
  until: unixSeconds.optional(),
  format: z.enum(EXPORT_FORMATS as unknown as ['csv', 'json']).default('csv'),
});

// A reporting read (docs/deploy.md "Read replica"): on the replica when it is fresh; on the primary when it lags; when it
// is down, 503 replica_unavailable before the first byte (policy `fail`): any merchant can start exports at will, and
// an outage of the replica must not move them onto the primary that takes the payments.
export function registerExportRoutes(app: FastifyInstance, deps: { db: Db; reads?: ReadDb | undefined; chains: ChainLookup }): void {
  const read = <T>(fn: (db: ReportingDb) => Promise<T>): Promise<T> =>
    deps.reads ? deps.reads.read(fn, 'fail') : fn(deps.db as ReportingDb);
  app.get('/exports/:kind', async (req, reply) => {
    const auth = req.auth!;
    const kind = (req.params as { kind?: string }).kind ?? '';
    if (!(EXPORT_KIND_NAMES as string[]).includes(kind)) throw resourceNotFound('kind', 'export kind');
    refuseBadStrings(req.query);
    const q = validate(exportQuery, req.query);
    const until = q.until ?? new Date();
    if (until <= q.since) throw parameterInvalid('until', 'until must be after since.');
    const enc = exportEncoder(q.format, exportColumns(kind as ExportKindName));
    const body = new PassThrough();
    const write = async (chunk: string | Uint8Array) => {
      if (body.destroyed) throw new Error('export client went away');
      if (chunk.length > 0 && !body.write(chunk)) await new Promise<void>((resolve) => body.once('drain', resolve).once('close', resolve));
    };
    // Where the read goes is decided before the answer starts: a refusal is still a JSON error.
    let routed!: () => void;
    const started = new Promise<void>((resolve) => {
      routed = resolve;
    });
    const run = read(async (db) => {
      routed();
      await write(enc.start());
      await streamExport(
        db,
        kind as ExportKindName,
        { since: q.since, until, merchant: { id: auth.merchantId, mode: auth.mode } },
        { tokenDecimals: deps.chains.tokenDecimals },
        (rows) => write(enc.page(rows)),
      );
      await write(enc.end());
      body.end();
    });
    await Promise.race([started, run]);
    run.catch((err: unknown) => {
      req.log.warn({ err, kind }, 'export stopped before its end');
      body.destroy();
    });
    const file = `${kind}-${q.since.toISOString().slice(0, 10)}-${until.toISOString().slice(0, 10)}.${q.format}`;
    return reply.header('content-type', enc.contentType).header('content-disposition', `attachment; filename="${file}"`).send(body);
  });
}
