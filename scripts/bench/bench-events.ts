import type { OutboxEventInput } from '../../src/ledger/core/outbox.js';

// The webhook benchmarks' event (webhooks.ts, processes.ts): event k of a run, a completed payment of merchant
// `merchantId`, in the shape the service's own payment events carry.
export function benchPaymentEvent(merchantId: string, k: number): OutboxEventInput {
  return {
    merchantId,
    mode: 'test',
    type: 'payment.completed',
    object: {
      amount: '10.00',
      status: 'completed',
      currency: 'USDT',
      exchange_rate: '1',
      order_id: `o-${k}`,
      session_id: `cs_${k}`,
      source: 'api',
    },
    aggregateId: `cs_${k}`,
  };
}
