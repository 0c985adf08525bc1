import { NETWORK_IDS } from '../../../chains/vocabulary.js';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { consoleWallets } from '../../operations/wallets.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from '../route.js';
import { walletList } from '../contract/wallets.js';

// Wallets route (operators): every operator wallet with balances (bounded read, cached seconds), nonce, pending attempts.

export async function registerWalletRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { db, log } = deps.ops;
  consoleRoute(app, db, {
    method: 'GET',
    url: '/wallets',
    summary: 'Hot wallets, gas stations and resource accounts with balances',
    response: walletList,
    role: 'operator',
    query: z.strictObject({
      network: z.enum(NETWORK_IDS).optional(),
      mode: z.enum(['test', 'live']).optional(),
      merchant_id: z.string().min(1).max(64).optional(),
    }),
    handler: async ({ query }) =>
      consoleWallets(
        { db, adapters: deps.ops.chains, treasury: deps.ops.treasury, log },
        {
          ...(query.network ? { network: query.network } : {}),
          ...(query.mode ? { mode: query.mode } : {}),
          ...(query.merchant_id ? { merchantId: query.merchant_id } : {}),
        },
      ),
  });
}
