import { describe, expect, it } from 'vitest';
import { PAYMENT_EVENT_TYPE, paymentEventObject } from '../../src/domain/events/payment.js';
import type { SessionRow } from '../../src/ledger/payments/session-row.js';
import {
  EVENT_OBJECT_SCHEMAS,
  invoiceEventObject,
  REFUND_EVENT_TYPE,
  refundEventObject,
  subscriptionEventObject,
  validateEventEnvelope,
  WEBHOOK_EVENT_TYPES,
} from '../../src/domain/events/index.js';

const envelope = (type: string, object: unknown) => ({ id: 'evt_1732147200000000001', type, created_at: 1732147200, data: { object } });

describe('event catalog', () => {
  it('names every event type of the spec', () => {
    expect([...WEBHOOK_EVENT_TYPES].sort()).toEqual(
      [
        'payment.completed',
        'payment.failed',
        'payment.expired',
        'payment.cancelled',
        'refund.succeeded',
        'refund.failed',
        'subscription.created',
        'subscription.trialing',
        'subscription.active',
        'subscription.past_due',
        'subscription.canceled',
        'subscription.updated',
        'subscription.incomplete_expired',
        'invoice.created',
        'invoice.paid',
        'invoice.payment_failed',
      ].sort(),
    );
  });

  it('validates the envelope and rejects unknown types and fields', () => {
    expect(validateEventEnvelope(envelope('payment.unknown', {}))).not.toEqual([]);
    expect(validateEventEnvelope({ ...envelope('refund.failed', {}), extra: 1 })).not.toEqual([]);
    expect(validateEventEnvelope({ ...envelope('refund.failed', {}), id: 'evt_x' })).not.toEqual([]);
  });
});

describe('payment events (produced by the ledger)', () => {
  const session = {
    id: 'cs_AAAAAAAAAAAAAAAAAAAAAAAA',
    order_id: 'o-1',
    target_amount_minor: 1999n,
    target_currency: 'USDC',
    exchange_rate: '1.0841',
  } as unknown as SessionRow;
  it('match the spec shape for every outcome', () => {
    for (const outcome of ['completed', 'failed', 'expired', 'canceled'] as const) {
      const obj = paymentEventObject(session, outcome);
      expect(validateEventEnvelope(envelope(PAYMENT_EVENT_TYPE[outcome], obj))).toEqual([]);
    }
    expect(paymentEventObject(session, 'completed')).toEqual({
      amount: '19.99',
      status: 'completed',
      currency: 'USDC',
      exchange_rate: '1.0841',
      order_id: 'o-1',
      session_id: session.id,
      source: 'api',
    });
    expect(validateEventEnvelope(envelope('payment.expired', paymentEventObject(session, 'expired', { text: '', currency: '' })))).toEqual(
      [],
    );
    expect(validateEventEnvelope(envelope('payment.completed', paymentEventObject(session, 'canceled')))).not.toEqual([]);
  });
});

describe('refund events', () => {
  it('session flow: merchant refund id, int64 minor-unit amount', () => {
    const obj = refundEventObject({
      outcome: 'completed',
      sessionId: 'cs_1',
      orderId: 'o-1',
      refundId: 'merchant-r-1',
      amountMinor: 1250n,
      currency: 'USDT',
    });
    expect(obj).toEqual({
      session_id: 'cs_1',
      order_id: 'o-1',
      refund_id: 'merchant-r-1',
      refund_amount: 1250,
      refund_currency: 'USDT',
      status: 'completed',
      source: 'api',
    });
    expect(validateEventEnvelope(envelope(REFUND_EVENT_TYPE.completed, obj))).toEqual([]);
    expect(REFUND_EVENT_TYPE).toEqual({ completed: 'refund.succeeded', failed: 'refund.failed' });
  });
  it('subscription flow adds external_refund_id and original_currency', () => {
    const obj = refundEventObject({
      outcome: 'failed',
      sessionId: 'pay_1',
      orderId: 'o-2',
      refundId: 're_1',
      amountMinor: 5n,
      currency: 'USDC',
      subscription: { externalRefundId: 'm-9', originalCurrency: 'USD' },
    });
    expect(obj).toMatchObject({ refund_id: 're_1', external_refund_id: 'm-9', original_currency: 'USD', status: 'failed' });
    expect(validateEventEnvelope(envelope('refund.failed', obj))).toEqual([]);
    expect(validateEventEnvelope(envelope('refund.succeeded', obj))).not.toEqual([]);
  });
  it('refuses amounts that a JSON number cannot carry exactly', () => {
    expect(() =>
      refundEventObject({ outcome: 'completed', sessionId: 's', orderId: 'o', refundId: 'r', amountMinor: 2n ** 60n, currency: 'USDT' }),
    ).toThrow(RangeError);
  });
});

describe('subscription events', () => {
  const input = {
    subscriptionId: 'sub_1',
    customerId: 'cus-1',
    status: 'active' as const,
    cancelAtPeriodEnd: false,
    currentPeriodStart: new Date('2026-11-01T00:00:00Z'),
    currentPeriodEnd: new Date('2026-12-01T00:00:00Z'),
    items: [
      {
        priceId: 'price_1',
        productId: 'prod_1',
        quantity: 1,
        currency: 'USD',
        interval: 'month' as const,
        intervalCount: 1,
        amountMinor: 999n,
      },
    ],
  };
  it('have the spec fields, optional ones omitted when absent', () => {
    const obj = subscriptionEventObject(input);
    expect(obj).toEqual({
      subscription_id: 'sub_1',
      customer_id: 'cus-1',
      status: 'active',
      cancel_at_period_end: false,
      current_period_start: 1793491200,
      current_period_end: 1796083200,
      source: 'api',
      items: [
        { price_id: 'price_1', quantity: 1, currency: 'USD', product_id: 'prod_1', interval: 'month', interval_count: 1, amount: 999 },
      ],
    });
    expect(validateEventEnvelope(envelope('subscription.active', obj))).toEqual([]);
    const canceled = subscriptionEventObject({
      ...input,
      status: 'canceled',
      canceledAt: new Date('2026-11-15T00:00:00Z'),
      checkoutUrl: 'https://pay.example/s',
    });
    expect(canceled).toMatchObject({ canceled_at: 1794700800, checkout_url: 'https://pay.example/s' });
    expect(validateEventEnvelope(envelope('subscription.canceled', canceled))).toEqual([]);
    expect(validateEventEnvelope(envelope('subscription.past_due', obj))).not.toEqual([]);
  });
});

describe('invoice events', () => {
  it('have the spec fields; a failed payment leaves the invoice open with payment_status failed', () => {
    const base = {
      invoiceId: 'in_1',
      subscriptionId: 'sub_1',
      customerId: 'cus-1',
      amountDueMinor: 999n,
      amountPaidMinor: 0n,
      currency: 'USD',
      billingReason: 'subscription_cycle',
      periodStart: new Date('2026-11-01T00:00:00Z'),
      periodEnd: new Date('2026-12-01T00:00:00Z'),
    };
    const failed = invoiceEventObject({ ...base, status: 'open', paymentStatus: 'failed' });
    expect(failed).toEqual({
      invoice_id: 'in_1',
      subscription_id: 'sub_1',
      customer_id: 'cus-1',
      amount_due: 999,
      amount_paid: 0,
      amount_remaining: 999,
      currency: 'USD',
      status: 'open',
      payment_status: 'failed',
      billing_reason: 'subscription_cycle',
      period_start: 1793491200,
      period_end: 1796083200,
      source: 'api',
    });
    expect(validateEventEnvelope(envelope('invoice.payment_failed', failed))).toEqual([]);
    const paid = invoiceEventObject({
      ...base,
      amountPaidMinor: 999n,
      status: 'paid',
      paymentStatus: 'paid',
      paidAt: new Date('2026-11-01T00:05:00Z'),
    });
    expect(paid).toMatchObject({ amount_remaining: 0, paid_at: 1793491500 });
    expect(validateEventEnvelope(envelope('invoice.paid', paid))).toEqual([]);
    expect(validateEventEnvelope(envelope('invoice.created', paid))).not.toEqual([]);
    expect(Object.keys(EVENT_OBJECT_SCHEMAS)).toHaveLength(16);
  });
});
