import { NETWORK_IDS } from '../../../chains/vocabulary.js';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { accountLegs, acknowledgeEntry, reconcileRuns, startReconcile, unexplainedEntries } from '../../operations/books.js';
import {
  acknowledgeBody,
  startReconcileBody,
  accountLegList,
  acknowledgeResponse,
  reconcileRunList,
  startReconcileResponse,
  unexplainedList,
} from '../contract/books.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from '../route.js';

// Books routes (operators): reconcile runs and starting one, unexplained entries and their acknowledgement, an
// account's journal legs.

const mode = z.enum(['test', 'live']);
const network = z.enum(NETWORK_IDS);
const page = { limit: z.coerce.number().int().min(1).max(100).default(25), cursor: z.string().max(500).optional() };

export async function registerBooksRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { db, log } = deps.ops;
  consoleRoute(app, db, {
    method: 'GET',
    url: '/reconcile/runs',
    summary: 'Reconcile runs per network',
    response: reconcileRunList,
    role: 'operator',
    query: z.strictObject({
      ...page,
      sort: z.literal('id').optional(),
      order: z.literal('desc').optional(),
      network: network.optional(),
      mode: mode.optional(),
    }),
    handler: async ({ query }) =>
      reconcileRuns(db, {
        limit: query.limit,
        ...(query.cursor ? { cursor: query.cursor } : {}),
        ...(query.network ? { network: query.network } : {}),
        ...(query.mode ? { mode: query.mode } : {}),
      }),
  });
  consoleRoute(app, db, {
    method: 'POST',
    url: '/reconcile/run',
    summary: 'Start a reconcile run',
    response: startReconcileResponse,
    status: [202],
    role: 'operator',
    errors: { 409: ['network_not_configured'] },
    body: startReconcileBody,
    handler: async ({ body, audit, reply }) => {
      const r = startReconcile(
        { db, adapters: deps.ops.chains, log },
        { mode: body.mode, ...(body.network ? { network: body.network } : {}) },
      );
      await audit({
        action: 'reconcile.run',
        objectType: 'reconcile_job',
        objectId: r.job_id,
        merchantId: null,
        before: null,
        after: { network: body.network ?? null, mode: body.mode, chains: r.chains },
      });
      reply.code(202);
      return r;
    },
  });
  consoleRoute(app, db, {
    method: 'GET',
    url: '/journal/unexplained',
    summary: 'Unexplained movements of the journal',
    response: unexplainedList,
    role: 'operator',
    query: z.strictObject({
      network: network.optional(),
      mode: mode.optional(),
      all: z.enum(['true', 'false']).optional(),
      limit: z.coerce.number().int().min(1).max(100).default(100),
    }),
    handler: async ({ query }) => ({
      data: await unexplainedEntries(db, {
        limit: query.limit,
        all: query.all === 'true',
        ...(query.network ? { network: query.network } : {}),
        ...(query.mode ? { mode: query.mode } : {}),
      }),
    }),
  });
  consoleRoute(app, db, {
    method: 'POST',
    url: '/journal/unexplained/:id/acknowledge',
    summary: 'Acknowledge an unexplained movement, with a note',
    response: acknowledgeResponse,
    role: 'operator',
    params: z.strictObject({ id: z.string().regex(/^\d{1,18}$/) }),
    body: acknowledgeBody,
    handler: async ({ params, body, audit }) => {
      const r = await acknowledgeEntry(db, BigInt(params.id), body.note);
      await audit({
        action: 'journal_entry.acknowledge',
        objectType: 'journal_entry',
        objectId: params.id,
        merchantId: null,
        before: { acknowledged: false },
        after: { acknowledged: true, note: body.note },
      });
      return r;
    },
  });
  consoleRoute(app, db, {
    method: 'GET',
    url: '/journal/accounts/:account',
    summary: "One journal account's legs",
    response: accountLegList,
    role: 'operator',
    params: z.strictObject({ account: z.string().min(1).max(300) }),
    query: z.strictObject({ ...page, asset: z.string().min(1).max(100).optional() }),
    handler: async ({ params, query }) =>
      accountLegs(db, params.account, {
        limit: query.limit,
        ...(query.cursor ? { cursor: query.cursor } : {}),
        ...(query.asset ? { asset: query.asset } : {}),
      }),
  });
}
