import type { ConsoleActor } from '../actor.js';

// The live stream's topics (docs/console.md, "Live updates"): what a page subscribes to, and which topics an outbox
// event touches. A topic names a view, not data: the page re-reads its view when its topic changes.

export const LIST_TOPICS = ['overview', 'payments', 'refunds', 'subscriptions', 'webhooks', 'sweeps'] as const;
const OBJECT_TOPIC = /^(payment|sweep):[A-Za-z0-9_]{1,64}$/;

/** Parses `topics=a,b,...`: at most 10, each a list topic or `payment:<id>` / `sweep:<id>`; undefined if any is not. */
export function parseTopics(raw: string): string[] | undefined {
  const topics = [
    ...new Set(
      raw
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ];
  if (topics.length === 0 || topics.length > 10) return undefined;
  for (const t of topics) if (!(LIST_TOPICS as readonly string[]).includes(t) && !OBJECT_TOPIC.test(t)) return undefined;
  return topics;
}

/** The topics an outbox event of `type` about `aggregateId` changes. */
export function topicsOfEvent(type: string, aggregateId: string | null): string[] {
  const out = ['overview', 'webhooks'];
  if (type.startsWith('payment.')) {
    out.push('payments');
    if (aggregateId) out.push(`payment:${aggregateId}`);
  } else if (type.startsWith('refund.')) out.push('refunds', 'payments');
  else if (type.startsWith('subscription.') || type.startsWith('invoice.')) out.push('subscriptions');
  return out;
}

/** A merchant user hears only its merchant's events; an operator every merchant's. */
export function hears(actor: Pick<ConsoleActor, 'role' | 'merchantId'>, merchantId: string): boolean {
  return actor.role === 'operator' || actor.merchantId === merchantId;
}
