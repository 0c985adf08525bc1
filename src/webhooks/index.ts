// Webhooks: outbox relay, signed delivery with retries, delivery log, endpoint rules. Wiring: docs/webhooks.md.
export { startOutboxRelay, relayBatch, type OutboxRelay, type OutboxRelayOptions } from './relay.js';
export { startDeliveryWorker, type DeliveryWorker, type DeliveryWorkerOptions } from './worker.js';
export { reconcileDeliveries } from './reconciler.js';
export {
  loadWebhookConfig,
  webhookEnvSchema,
  webhookSettingsFrom,
  toWebhookSettings,
  WebhookConfigError,
  type WebhookEnv,
  type WebhookSettings,
} from './config.js';
export { buildDeliveryHeaders, signWebhook, USER_AGENT } from './signing.js';
export { checkWebhookTarget, isNonPublicAddress, redactUrl, systemResolver, type Resolver } from './url-policy.js';
export { DELIVERY_QUEUE, deliveryJobId } from './queue.js';
export type { WebhookLogger } from './logger.js';
export * from '../domain/events/index.js';
