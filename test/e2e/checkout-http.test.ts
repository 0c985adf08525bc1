import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { languageFromAcceptLanguage } from '../../src/checkout/i18n.js';
import { PAGE_CSP } from '../../src/checkout/security-headers.js';
import { startCheckoutStack, type CheckoutStack } from './checkout-harness.js';

// The page over plain HTTP: headers, no external URLs, nothing private, 404s, the form post, the event stream.
let stack: CheckoutStack;

beforeAll(async () => {
  stack = await startCheckoutStack();
});

afterAll(async () => {
  await stack?.stop();
});

let seq = 0;
async function createSession(body: Record<string, unknown> = {}) {
  const r = await stack.shop.post('/api/v1/checkout/sessions/create', {
    amount: '7.50',
    currency: 'USD',
    order_id: `order-private-${Date.now()}-${seq++}`,
    ...body,
  });
  expect(r.status).toBe(200);
  return r.json as { id: string; url: string; metadata: { order_id: string } };
}

const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers, redirect: 'manual' });

async function selectByForm(id: string, choice: string, lang = 'en') {
  return fetch(`${stack.base}/pay/${id}/select`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ choice, lang }).toString(),
    redirect: 'manual',
  });
}

/** Every URL the document would load or follow: attribute values of src, href and action, and CSS url(). */
function referencedUrls(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\b(?:src|href|action)\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+))/gi)) out.push(m[2] ?? m[3] ?? m[4] ?? '');
  for (const m of text.matchAll(/url\(\s*['"]?([^'")]+)/gi)) out.push(m[1]!);
  return out;
}

function assertNoExternalUrl(text: string) {
  expect(text).not.toMatch(/https?:\/\//i);
  for (const u of referencedUrls(text)) expect(u, `referenced URL ${u}`).toMatch(/^(\/(?!\/)|\?|ethereum:)/);
}

describe('hosted payment page over HTTP', () => {
  it('sends a strict CSP and the other security headers, and the page references no external URL', async () => {
    const s = await createSession({ success_url: 'https://merchant.example/thanks', cancel_url: 'https://merchant.example/cart' });
    const res = await get(s.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(PAGE_CSP);
    expect(PAGE_CSP).toContain("default-src 'none'");
    expect(PAGE_CSP).toContain("script-src 'self'");
    expect(PAGE_CSP).not.toContain('unsafe-inline');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    assertNoExternalUrl(html);
    // No inline script may run: the only executable script is the same-origin file; the other is a JSON data block.
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!.trim());
    expect(scripts).toHaveLength(2);
    expect(scripts[0]).toBe('type="application/json" id="sp-data"');
    expect(scripts[1]).toMatch(/^src="\/pay\/assets\/checkout\.[0-9a-f]{12}\.js" defer$/);
    expect(html).not.toMatch(/\sstyle=/); // no inline style attribute either (style-src 'self')
    expect(html).not.toMatch(/\son[a-z]+=/i); // no inline event handler

    // The selected state (address, QR code, deep link) and the assets are just as self-contained.
    expect((await selectByForm(s.id, 'ethereum:USDT')).status).toBe(303);
    const selected = await (await get(s.url)).text();
    expect(selected).toContain('id="sp-qr"');
    expect(selected).toMatch(/<svg class="qr-svg"/);
    assertNoExternalUrl(selected);
    for (const m of selected.matchAll(/(?:src|href)="(\/pay\/assets\/[^"]+)"/g)) {
      const a = await get(`${stack.base}${m[1]}`);
      expect(a.status).toBe(200);
      expect(a.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(a.headers.get('x-content-type-options')).toBe('nosniff');
      expect(a.headers.get('content-type')).toMatch(m[1]!.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      const body = await a.text();
      expect(body.length).toBeLessThan(12_000); // small: no framework
      assertNoExternalUrl(body);
    }
    expect((await get(`${stack.base}/pay/assets/checkout.000000000000.js`)).status).toBe(404);
  });

  it('exposes nothing private: no merchant id, order id, metadata or merchant URLs in the page or its status', async () => {
    const s = await createSession({ metadata: { crm_id: 'secret-crm-4711' }, success_url: 'https://merchant.example/private-return' });
    await selectByForm(s.id, 'ethereum:USDC');
    const page = await (await get(s.url)).text();
    const status = (await (await get(`${s.url}/status`)).json()) as Record<string, unknown>;
    const events = await readFirstEvent(`${s.url}/events`);
    for (const text of [page, JSON.stringify(status), events.data]) {
      expect(text).not.toContain(stack.merchantId);
      expect(text).not.toContain(s.metadata.order_id);
      expect(text).not.toContain('secret-crm-4711');
      expect(text).not.toContain('private-return');
    }
    expect(Object.keys(status).sort()).toEqual(
      [
        'confirmations',
        'due',
        'expires_at',
        'network',
        'pending',
        'received',
        'redirect',
        'remaining',
        'remaining_base',
        'shortfall',
        'shortfall_base',
        'state',
        'token',
      ].sort(),
    );
    expect(status).toMatchObject({
      state: 'waiting',
      network: 'ethereum',
      token: 'USDC',
      due: '7.50',
      remaining: '7.50',
      remaining_base: '7500000',
      shortfall: null,
      redirect: null,
    });
    // The success URL is reached only through the page's own redirect, and only once paid.
    const ret = await get(`${s.url}/return`);
    expect(ret.status).toBe(303);
    expect(ret.headers.get('location')).toBe(`/pay/${s.id}`);
  });

  it('answers a 404 page for an unknown or malformed session id', async () => {
    for (const id of ['cs_doesnotexist000000000000', 'cs_..%2F..%2Fetc', 'x'.repeat(290)]) {
      const res = await get(`${stack.base}/pay/${id}`, { 'accept-language': 'en' });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toBe(PAGE_CSP);
      const html = await res.text();
      expect(html).toContain('Payment not found');
      assertNoExternalUrl(html);
    }
    const zh = await get(`${stack.base}/pay/cs_doesnotexist000000000000`, { 'accept-language': 'zh-CN,zh;q=0.9' });
    expect(await zh.text()).toContain('未找到付款');
    const status = await get(`${stack.base}/pay/cs_doesnotexist000000000000/status`);
    expect(status.status).toBe(404);
    expect(((await status.json()) as { error: { code: string } }).error.code).toBe('resource_not_found');
    expect((await get(`${stack.base}/pay/cs_doesnotexist000000000000/events`)).status).toBe(404);
  });

  it('picks the language from Accept-Language (q-values honoured), ?lang= overriding', async () => {
    expect(languageFromAcceptLanguage('fr-FR, zh-TW;q=0.8, en;q=0.5')).toBe('zh');
    expect(languageFromAcceptLanguage('en;q=0.2, zh;q=0.9')).toBe('zh');
    expect(languageFromAcceptLanguage('zh;q=0, en')).toBe('en');
    expect(languageFromAcceptLanguage('de, fr')).toBeUndefined();
    const s = await createSession();
    const zh = await (await get(s.url, { 'accept-language': 'zh-CN,zh;q=0.9,en;q=0.8' })).text();
    expect(zh).toContain('<html lang="zh-CN">');
    expect(zh).toContain('选择支付方式');
    const en = await (await get(`${s.url}?lang=en`, { 'accept-language': 'zh-CN' })).text();
    expect(en).toContain('<html lang="en">');
    expect(en).toContain('Choose how to pay');
  });

  it('handles the picker form: refusals come back as messages, a merchant pin skips the picker', async () => {
    const s = await createSession();
    const bad = await selectByForm(s.id, 'ethereum:DAI');
    expect(bad.status).toBe(303);
    expect(bad.headers.get('location')).toBe(`/pay/${s.id}?lang=en&error=bad_choice`);
    const page = await (await get(`${stack.base}${bad.headers.get('location')}`)).text();
    expect(page).toContain('role="alert">Please choose a network and token.');
    const unavailable = await selectByForm(s.id, 'tron:USDT', 'zh');
    expect(unavailable.headers.get('location')).toBe(`/pay/${s.id}?lang=zh&error=unavailable`);

    // Expired: the form says so instead of binding an address.
    await stack.t.db
      .updateTable('payment_sessions')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', s.id)
      .execute();
    const late = await selectByForm(s.id, 'ethereum:USDT');
    expect(late.headers.get('location')).toBe(`/pay/${s.id}?lang=en&error=session_expired`);
    const row = await stack.t.db.selectFrom('payment_sessions').select('deposit_address').where('id', '=', s.id).executeTakeFirstOrThrow();
    expect(row.deposit_address).toBeNull();

    // Pinned by the merchant (metadata network + target_currency): instructions at once, no picker.
    const pinned = await createSession({ metadata: { network: 'ethereum', target_currency: 'USDC' } });
    const html = await (await get(pinned.url)).text();
    expect(html).not.toContain('name="choice"');
    expect(html).toContain('id="sp-address"');
    expect(html).toContain('7.50 USDC');
    expect(html).not.toContain('Change network or token');
  });

  it('streams the live status as server-sent events, starting with the current state', async () => {
    const s = await createSession();
    const first = await readFirstEvent(`${s.url}/events`);
    expect(first.contentType).toBe('text/event-stream; charset=utf-8');
    expect(JSON.parse(first.data)).toMatchObject({ state: 'select', network: null, token: null });
    await selectByForm(s.id, 'ethereum:USDT');
    const second = await readFirstEvent(`${s.url}/events`);
    expect(JSON.parse(second.data)).toMatchObject({ state: 'waiting', token: 'USDT', due: '7.50' });
  });
});

async function readFirstEvent(url: string): Promise<{ contentType: string | null; data: string }> {
  const ac = new AbortController();
  const res = await fetch(url, { signal: ac.signal });
  const reader = res.body!.getReader();
  let text = '';
  try {
    while (!/^data: .*\n\n/m.test(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
  } finally {
    ac.abort();
  }
  const m = /^data: (.*)$/m.exec(text);
  return { contentType: res.headers.get('content-type'), data: m?.[1] ?? '' };
}
