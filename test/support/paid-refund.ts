import { expect } from 'vitest';
import type { HarnessMerchant, ServiceHarness } from './service-harness.js';

/**
 * A paid USDT session of `m` for `amount` and a refund of `amountMinor` (integer minor units) against it, created
 * through the API (asserted 201): the refund's internal id and the payer it pays back.
 */
export async function paidRefund(h: ServiceHarness, m: HarnessMerchant, refundId: string, amount: string, amountMinor: number) {
  const s = await h.paidSession(m, { amount });
  const created = await m.client.post('/api/v1/refunds/create', {
    session_id: s.id,
    refund_id: refundId,
    amount: amountMinor,
    currency: 'USDT',
  });
  expect(created.status).toBe(201);
  return { id: created.json.id as string, payer: s.payer };
}
