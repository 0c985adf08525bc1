import { WEBHOOK_EVENT_TYPES } from '../domain/events/catalog.js';
import { LATENCY_BUCKETS, metrics } from './registry.js';

// Webhook deliveries by event type and outcome (delivered, retrying, failed, skipped), and the latency of the
// merchant endpoints that answered or timed out.

export const WEBHOOK_OUTCOMES = ['delivered', 'retrying', 'failed', 'skipped'] as const;

const deliveries = metrics.counter<'event_type' | 'outcome'>({
  name: 'stablepay_webhook_deliveries_total',
  help: 'Webhook delivery attempts (and decisions not to attempt) by event type and outcome.',
  labels: ['event_type', 'outcome'],
  values: { event_type: WEBHOOK_EVENT_TYPES, outcome: WEBHOOK_OUTCOMES },
});

const latency = metrics.histogram<'outcome'>({
  name: 'stablepay_webhook_delivery_duration_seconds',
  help: "Time a merchant's endpoint took to answer (or to time out), by outcome.",
  labels: ['outcome'],
  values: { outcome: WEBHOOK_OUTCOMES },
  buckets: LATENCY_BUCKETS,
});

export function recordWebhookAttempt(eventType: string, outcome: string, latencyMs: number | null): void {
  deliveries.inc({ event_type: eventType, outcome });
  if (latencyMs !== null) latency.observe({ outcome }, latencyMs / 1000);
}
