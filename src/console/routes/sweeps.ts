import { NETWORK_IDS } from '../../../chains/vocabulary.js';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { startSweeps, sweepDetail, sweepHistory, sweepPlan } from '../../operations/sweeps.js';
import type { SweepOpsDeps } from '../../operations/treasury-deps.js';
import * as contract from '../contract/treasury.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from '../route.js';

// Sweep routes (operators): the dry run, starting a run (returns at once; the sweep worker sends), history, one sweep.

const network = z.enum(NETWORK_IDS);
const mode = z.enum(['test', 'live']);

export async function registerSweepRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { db } = deps.ops;
  // Read per request: the entry point (or a test) may configure the chains and the treasury after registration.
  const ops = (): SweepOpsDeps => ({ db, adapters: deps.ops.chains, treasury: deps.ops.treasury, log: deps.ops.log });
  consoleRoute(app, db, {
    method: 'GET',
    url: '/sweeps/plan',
    summary: 'The sweep plan (dry run) with fee estimates',
    response: contract.sweepPlan,
    role: 'operator',
    errors: { 409: ['network_not_configured', 'treasury_not_configured'] },
    query: z.strictObject({ network: network.optional(), mode: mode.optional(), merchant_id: z.string().min(1).max(64).optional() }),
    handler: async ({ query }) =>
      sweepPlan(ops(), {
        ...(query.network ? { network: query.network } : {}),
        ...(query.mode ? { mode: query.mode } : {}),
        ...(query.merchant_id ? { merchantId: query.merchant_id } : {}),
      }),
  });
  consoleRoute(app, db, {
    method: 'POST',
    url: '/sweeps/run',
    summary: 'Start sweeps (the sweep worker sends them)',
    response: contract.runSweepResponse,
    status: [202],
    role: 'operator',
    errors: { 409: ['network_not_configured', 'treasury_not_configured'] },
    body: contract.runSweepBody,
    handler: async ({ body, audit, reply }) => {
      const r = await startSweeps(ops(), {
        network: body.network,
        mode: body.mode,
        ...(body.merchant_id ? { merchantId: body.merchant_id } : {}),
      });
      await audit({
        action: 'sweep.run',
        objectType: 'sweep_run',
        objectId: r.sweep_ids.join(',') || `${body.network}/${body.mode}`,
        merchantId: body.merchant_id ?? null,
        before: null,
        after: { network: body.network, mode: body.mode, merchant_id: body.merchant_id ?? null, sweep_ids: r.sweep_ids },
      });
      reply.code(202);
      return r;
    },
  });
  consoleRoute(app, db, {
    method: 'GET',
    url: '/sweeps',
    summary: 'Sweep history',
    response: contract.sweepList,
    role: 'operator',
    query: z.strictObject({
      limit: z.coerce.number().int().min(1).max(100).default(25),
      cursor: z.string().max(500).optional(),
      sort: z.literal('created_at').optional(),
      order: z.literal('desc').optional(),
      merchant_id: z.string().min(1).max(64).optional(),
      status: z.enum(['running', 'completed', 'partial', 'failed']).optional(),
      network: network.optional(),
      mode: mode.optional(),
    }),
    handler: async ({ query }) =>
      sweepHistory(db, deps.ops.chains, {
        limit: query.limit,
        ...(query.cursor ? { cursor: query.cursor } : {}),
        ...(query.merchant_id ? { merchantId: query.merchant_id } : {}),
        ...(query.status ? { status: query.status } : {}),
        ...(query.network ? { network: query.network } : {}),
        ...(query.mode ? { mode: query.mode } : {}),
      }),
  });
  consoleRoute(app, db, {
    method: 'GET',
    url: '/sweeps/:id',
    summary: 'One sweep with its steps',
    response: contract.sweepDetail,
    role: 'operator',
    params: z.strictObject({ id: z.string().min(1).max(64) }),
    handler: async ({ params }) => sweepDetail(db, deps.ops.chains, params.id),
  });
}
