import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fund, payFrom, walletAt } from '../support/evm-tokens/scenario.js';
import { startFakeTicker, type FakeTicker } from '../support/fake-ticker.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';

// Issue 13, item 14: with a live rate source, USDT and USDC are quoted apart at creation and the payer's choice takes
// the quote of the coin chosen (never the USDT quote "at par"). The whole service on Anvil, Coinbase's fake ticker.
let h: ServiceHarness;
let ticker: FakeTicker;
let m: HarnessMerchant;
let n = 0;

const RATES = { EUR: { USDT: '1.0841', USDC: '1.2' }, GBP: { USDC: '1.2712' } };

beforeAll(async () => {
  ticker = await startFakeTicker({ coinbaseRates: structuredClone(RATES) });
  h = await startServiceHarness({ extraEnv: { RATE_SOURCES: 'peg,coinbase', RATE_COINBASE_BASE_URL: ticker.url, RATE_CACHE_TTL_MS: '0' } });
  m = await h.newMerchant('Quotes shop');
});

afterAll(async () => {
  await h?.close();
  await ticker?.close();
});

const create = (body: Record<string, unknown>) => m.client.post('/api/v1/checkout/sessions/create', { order_id: `q-${n++}`, ...body });
const get = async (id: string) => (await m.client.get(`/api/v1/checkout/sessions/${id}`)).json as Record<string, unknown>;
const select = async (id: string, token: string) => {
  const r = await fetch(`${h.base}/checkout/sessions/${id}/select`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ network: 'ethereum', token }),
  });
  return { status: r.status, json: (await r.json()) as Record<string, any> };
};
const page = async (id: string, query = '') => (await fetch(`${h.base}/pay/${id}?lang=en${query}`)).text();

describe('the rate of the coin chosen (item 14)', () => {
  it('locks both quotes at creation; choosing USDC takes the USDC quote, a later ticker move changes nothing', async () => {
    const created = await create({ amount: '12.50', currency: 'EUR' });
    expect(created.status).toBe(200);
    const id = created.json.id as string;
    expect(created.json).toMatchObject({ target_currency: 'USDT', target_amount_total: '13.56', exchange_rate: '1.0841' });
    const lockedAt = created.json.rate_locked_at;

    const picker = await page(id);
    expect(picker).toContain('<span class="option-amount">13.56 USDT</span>');
    expect(picker).toContain('<span class="option-amount">15.00 USDC</span>');

    ticker.options = { coinbaseRates: { EUR: { USDT: '2', USDC: '3' } } }; // the market moves: nothing locked may follow
    const sel = await select(id, 'USDC');
    expect(sel.status).toBe(200);
    expect(sel.json).toMatchObject({ token: 'USDC', amount_due: '15.00', amount_due_base: '15000000' });
    expect(await get(id)).toMatchObject({
      currency: 'eur',
      amount_total: '12.50',
      target_currency: 'USDC',
      target_amount_total: '15.00',
      exchange_rate: '1.2',
      rate_locked_at: lockedAt,
    });
    const shown = await page(id);
    expect(shown).toContain('15.00 USDC');
    expect(shown).toContain('Rate locked at 1 EUR = 1.2 USDC');
    expect(shown).not.toContain('13.56');

    const back = await select(id, 'USDT');
    expect(back.json).toMatchObject({ token: 'USDT', amount_due: '13.56' });
    expect(await get(id)).toMatchObject({
      target_currency: 'USDT',
      target_amount_total: '13.56',
      exchange_rate: '1.0841',
      rate_locked_at: lockedAt,
    });
    ticker.options = { coinbaseRates: structuredClone(RATES) };
  });

  it('a USDC payment of the USDC quote pays the session; payment.completed names USDC and its rate', async () => {
    const created = await create({ amount: '12.50', currency: 'EUR' });
    const id = created.json.id as string;
    const sel = await select(id, 'USDC');
    const payer = walletAt(20, h.node.provider);
    await h.node.rpc('anvil_setBalance', [payer.address, '0xde0b6b3a7640000']);
    await fund(h.tokens.USDC, payer.address, 15_000_000n);
    await payFrom(payer, h.tokens.USDC, sel.json.deposit_address as string, 15_000_000n);
    await h.node.mine(2);
    await h.until(async () => ((await get(id)).payment_status === 'paid' ? true : undefined));
    const events = await h.t.db.selectFrom('outbox_events').select(['type', 'payload']).where('aggregate_id', '=', id).execute();
    expect(events.map((e) => e.type)).toEqual(['payment.completed']);
    expect((events[0]!.payload as { data: { object: Record<string, string> } }).data.object).toMatchObject({
      amount: '15.00',
      currency: 'USDC',
      exchange_rate: '1.2',
    });
  });

  it('a coin that could not be quoted at creation is not offered: the page leaves it out, /select refuses it with 400', async () => {
    const created = await create({ amount: '10.00', currency: 'GBP' }); // the ticker has no GBP→USDT rate
    expect(created.status).toBe(200);
    const id = created.json.id as string;
    expect(created.json).toMatchObject({ target_currency: 'USDC', target_amount_total: '12.72', exchange_rate: '1.2712' });
    const refused = await select(id, 'USDT');
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'token' });
    expect(refused.json.error.message).toMatch(/USDT is not offered/);
    const form = await fetch(`${h.base}/pay/${id}/select`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'choice=ethereum%3AUSDT&lang=en',
    });
    expect(form.status).toBe(303);
    expect(form.headers.get('location')).toContain('error=unavailable');
    expect((await get(id)).target_currency).toBe('USDC');
    // One option remains, so the page binds it at once: USDC on Ethereum, its quote.
    const shown = await page(id);
    expect(shown).not.toContain('value="ethereum:USDT"');
    expect(shown).toContain('12.72 USDC');
  });

  it('no coin quotable, or the pinned coin not quotable: 503 rate_unavailable; a pinned coin offers no other', async () => {
    const none = await create({ amount: '1000', currency: 'JPY' });
    expect(none.status).toBe(503);
    expect(none.json.error.code).toBe('rate_unavailable');
    const pinned = await create({ amount: '10.00', currency: 'GBP', metadata: { target_currency: 'USDT' } });
    expect(pinned.status).toBe(503);
    const usdc = await create({ amount: '12.50', currency: 'EUR', metadata: { target_currency: 'USDC' } });
    expect(usdc.json).toMatchObject({ target_currency: 'USDC', target_amount_total: '15.00', exchange_rate: '1.2' });
    expect((await select(usdc.json.id as string, 'USDT')).status).toBe(400);
  });

  it('with the peg nothing changes: a USD session pays 25.00 in either coin at rate 1', async () => {
    const created = await create({ amount: '25.00', currency: 'USD' });
    const id = created.json.id as string;
    expect(created.json).toMatchObject({ target_currency: 'USDT', target_amount_total: '25.00', exchange_rate: '1' });
    expect((await select(id, 'USDC')).json).toMatchObject({ amount_due: '25.00' });
    expect(await get(id)).toMatchObject({ target_currency: 'USDC', target_amount_total: '25.00', exchange_rate: '1' });
  });
});
