import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { overview } from '../../operations/overview.js';
import { merchantScope } from '../actor.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from '../route.js';
import { overviewResponse } from '../contract/overview.js';

// Overview route: operators see every merchant (or one, merchant_id), merchant users their own; chain-side parts
// (watchers, wallets, reconcile) for operators only.

export async function registerOverviewRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { db, log } = deps.ops;
  consoleRoute(app, db, {
    method: 'GET',
    url: '/overview',
    summary: 'The overview: volumes, rates, watchers, wallets, reconcile',
    response: overviewResponse,
    query: z.strictObject({ merchant_id: z.string().min(1).max(64).optional() }),
    handler: async ({ actor, query }) => {
      const merchantId = merchantScope(actor, query.merchant_id);
      return overview(
        { db, adapters: deps.ops.chains, treasury: deps.ops.treasury, log },
        { operator: actor.role === 'operator', ...(merchantId ? { merchantId } : {}) },
      );
    },
  });
}
