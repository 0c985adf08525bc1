import type { FastifyInstance } from 'fastify';
import type { ConsoleDeps } from '../deps.js';
import { registerAuditRoutes } from './audit.js';
import { registerBooksRoutes } from './books.js';
import { registerOverviewRoutes } from './overview.js';
import { registerSweepRoutes } from './sweeps.js';
import { registerTreasuryRoutes } from './treasury.js';
import { registerWalletRoutes } from './wallets.js';
import { registerExportRoutes } from './exports.js';
import { registerKeyRoutes } from './keys.js';
import { registerMerchantRoutes } from './merchants.js';
import { registerNetworkRoutes } from './networks.js';
import { registerPaymentRoutes } from './payments.js';
import { registerRefundRoutes } from './refunds.js';
import { registerSearchRoutes } from './search.js';
import { registerStrandedRoutes } from './stranded.js';
import { registerSubscriptionRoutes } from './subscriptions.js';
import { registerUserRoutes } from './users.js';
import { registerWebhookRoutes } from './webhooks.js';

// Every console resource's routes. One line per area; each area's file holds its routes and nothing else.
export async function registerConsoleResources(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  registerUserRoutes(app, deps);
  registerNetworkRoutes(app, deps);
  registerAuditRoutes(app, deps);
  registerPaymentRoutes(app, deps);
  registerRefundRoutes(app, deps);
  registerStrandedRoutes(app, deps);
  registerSearchRoutes(app, deps);
  await registerWebhookRoutes(app, deps);
  await registerKeyRoutes(app, deps);
  await registerSubscriptionRoutes(app, deps);
  await registerExportRoutes(app, deps);
  await registerMerchantRoutes(app, deps);
  await registerOverviewRoutes(app, deps);
  await registerTreasuryRoutes(app, deps);
  await registerSweepRoutes(app, deps);
  await registerBooksRoutes(app, deps);
  await registerWalletRoutes(app, deps);
}
