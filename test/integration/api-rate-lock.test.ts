import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRate, RateService, type Rate, type RateSource } from '../../src/rates/index.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import type { SignedClient } from '../support/signed-client.js';

// decisions.md, Conversion and rates: target_amount_total = amount × rate rounded UP to 2 decimals, and the rate is
// locked at creation for the session's life (a later quote never changes a session). A real server over a rate
// source whose EUR rate the test moves.

let rate: Rate = parseRate('1.0857');
const movable: RateSource = { name: 'movable', quote: async (from) => (from === 'EUR' ? rate : parseRate('1')) };
let h: ApiHarness;
let shop: SignedClient;
beforeAll(async () => {
  h = await startApiHarness({ rates: new RateService([movable], { timeoutMs: 1000 }) });
  shop = (await h.merchant('Euro shop')).test;
});
afterAll(async () => h?.close());

describe('conversion at a locked rate', () => {
  it('rounds the target up to the cent and keeps the rate of creation for the session life', async () => {
    rate = parseRate('1.0857');
    const created = await shop.post('/api/v1/checkout/sessions/create', {
      amount: '10.01',
      currency: 'EUR',
      order_id: `eur-${randomBytes(4).toString('hex')}`,
    });
    expect(created.status).toBe(200);
    // 10.01 × 1.0857 = 10.867857: up to 10.87, never down to 10.86.
    expect(created.json).toMatchObject({
      amount_total: '10.01',
      currency: 'eur',
      exchange_rate: '1.0857',
      target_currency: 'USDT',
      target_amount_total: '10.87',
    });

    rate = parseRate('2');
    const later = await shop.get(`/api/v1/checkout/sessions/${created.json.id}`);
    expect(later.json).toMatchObject({
      exchange_rate: '1.0857',
      target_amount_total: '10.87',
      rate_locked_at: created.json.rate_locked_at,
    });
    const fresh = await shop.post('/api/v1/checkout/sessions/create', {
      amount: '10.01',
      currency: 'EUR',
      order_id: `eur-${randomBytes(4).toString('hex')}`,
    });
    expect(fresh.json).toMatchObject({ exchange_rate: '2', target_amount_total: '20.02' });
  });
});
