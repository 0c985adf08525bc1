import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/database.js';
import type { Clock } from '../../domain/clock.js';
import type { SubscriptionSettings } from '../../domain/subscription-settings.js';
import { registerInvoiceRoutes } from './invoices.js';
import { registerPaymentMethodRoutes } from './payment-methods.js';
import { registerPaymentRoutes } from './payments.js';
import { registerSubscriptionRoutes } from './subscriptions.js';

// Every signed route of the subscription flow: subscriptions, invoices, payments, payment methods.
export interface SubscriptionApiDeps {
  db: Db;
  checkoutBaseUrl: string;
  clock?: Clock;
  settings?: SubscriptionSettings;
  /** The form shown to merchants of a canonical address (EIP-55, base58), by network and mode. */
  displayAddress?: (network: string, mode: 'test' | 'live', canonical: string) => string;
}

export function registerSubscriptionApi(app: FastifyInstance, deps: SubscriptionApiDeps): void {
  registerSubscriptionRoutes(app, deps);
  registerInvoiceRoutes(app, deps);
  registerPaymentRoutes(app, deps);
  registerPaymentMethodRoutes(app, deps);
}
