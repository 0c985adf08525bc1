import type { NewSession } from '../../src/ledger/payments/sessions.js';

/**
 * A plain USD session for `insertSession` (no line items, no URLs, no network chosen, no quote stored), 12.50 USD
 * unless told otherwise: the fixture tests and benchmarks write sessions with directly.
 */
export function plainSession(o: Pick<NewSession, 'id' | 'merchantId'> & Partial<NewSession>): NewSession {
  const amountMinor = o.amountMinor ?? 1250n;
  return {
    mode: 'test',
    orderId: `order-${o.id}`,
    amountMinor,
    currency: 'USD',
    description: null,
    merchantDomainId: null,
    lineItems: null,
    taxMinor: null,
    shippingMinor: null,
    successUrl: null,
    cancelUrl: null,
    metadata: {},
    targetCurrency: 'USDT',
    targetAmountMinor: amountMinor,
    exchangeRate: null,
    rateLockedAt: null,
    network: null,
    token: null,
    defaultLifetimeSeconds: 1800,
    ...o,
  };
}
