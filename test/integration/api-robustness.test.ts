import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import type { SignedClient } from '../support/signed-client.js';

const logLines: string[] = [];
const logStream = new Writable({
  write(chunk, _enc, cb) {
    logLines.push(String(chunk));
    cb();
  },
});

let h: ApiHarness;
let shop: SignedClient;

beforeAll(async () => {
  h = await startApiHarness({ logLevel: 'info', logStream });
  shop = (await h.merchant()).test;
});
afterAll(async () => h.close());

// A seeded generator keeps a failure reproducible.
function rng(seed: number) {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

function randomValue(r: () => number, depth = 0): unknown {
  const pick = Math.floor(r() * (depth > 2 ? 6 : 8));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return Math.floor(r() * 2e9) - 1e9;
    case 3:
      return r() * 1e30;
    case 4:
      return ['', '1', '1.00', '-5', '1e400', '０', '\u0000', 'x'.repeat(300), 'USD', 'usdt'][Math.floor(r() * 10)];
    case 5:
      return String.fromCharCode(...Array.from({ length: 8 }, () => Math.floor(r() * 0xffff)));
    case 6:
      return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
    default: {
      const keys = [
        'amount',
        'currency',
        'order_id',
        'line_items',
        'price_data',
        'unit_amount',
        'product_data',
        'name',
        'quantity',
        'metadata',
        'tax_amount',
        'success_url',
        '__proto__',
        'constructor',
        'network',
      ];
      return Object.fromEntries(
        Array.from({ length: Math.floor(r() * 5) }, () => [keys[Math.floor(r() * keys.length)]!, randomValue(r, depth + 1)]),
      );
    }
  }
}

describe('no input yields a 500', () => {
  it('answers 300 random JSON bodies with 200 or a 4xx in the error shape', async () => {
    const r = rng(20261121);
    for (let i = 0; i < 300; i++) {
      const base: Record<string, unknown> = { amount: '1.00', currency: 'USD', order_id: `fuzz-${i}` };
      const body = r() < 0.5 ? { ...base, ...(randomValue(r) as object) } : randomValue(r);
      const res = await shop.post('/api/v1/checkout/sessions/create', JSON.stringify(body) ?? 'undefined');
      expect(res.status, `body ${JSON.stringify(body)} → ${res.text}`).toBeLessThan(500);
      if (res.status !== 200) {
        expect(res.json.error.code).toEqual(expect.any(String));
        expect(res.json.request_id).toMatch(/^req_/);
      }
    }
  });

  it('answers random bytes, odd paths and odd headers without a 500', async () => {
    const r = rng(7);
    for (let i = 0; i < 100; i++) {
      const res = await shop.post('/api/v1/checkout/sessions/create', randomBytes(Math.floor(r() * 200)).toString('latin1'));
      expect(res.status).toBeLessThan(500);
    }
    for (const path of [
      '/api/v1/checkout/sessions/%00',
      '/api/v1/checkout/sessions/' + 'a'.repeat(400),
      '/api/v1/checkout/sessions/..%2f..%2f',
      '/api/v1/checkout/sessions/%E0%A4%A',
      '/api/v1/checkout/sessions?page=1e3',
      '/api/v1/checkout/sessions?page=0x10',
      '/api/v1/checkout/sessions?page_size=-1&page_size=2',
    ]) {
      const res = await shop.get(path);
      expect(res.status, path).toBeLessThan(500);
      expect(res.json?.error?.code, path).toEqual(expect.any(String));
    }
    const odd = await shop.post(
      '/api/v1/checkout/sessions/create',
      { amount: '1', currency: 'USD', order_id: 'odd' },
      {
        headers: { 'content-type': 'application/json; charset=utf-8', 'idempotency-key': 'k'.repeat(300) },
      },
    );
    expect(odd.status).toBe(400);
    expect(odd.json.error.param).toBe('Idempotency-Key');
  });
});

describe('logs', () => {
  it('are JSON lines with the request id, and never carry keys, secrets or signatures', async () => {
    const res = await shop.post('/api/v1/checkout/sessions/create', { amount: '2', currency: 'USD', order_id: 'log-1' });
    expect(res.status).toBe(200);
    await shop.post('/api/v1/checkout/sessions/create', { amount: '2', currency: 'USD', order_id: 'log-2' }, { signWith: 'bad' });
    const requestId = res.headers.get('request-id')!;
    const mine = logLines.map((l) => JSON.parse(l)).filter((l) => l.request_id === requestId);
    expect(mine.length).toBeGreaterThanOrEqual(1);
    const all = logLines.join('\n');
    expect(all).not.toContain(shop.creds.key);
    expect(all).not.toContain(shop.creds.secret);
    // No signature or hash: 64 hex characters with both digits and letters.
    expect(all.match(/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{64}\b/)?.[0] ?? 'none').toBe('none');
    // Refusals are logged with their code, for operators answering a merchant's question.
    expect(all).toContain('"code":"invalid_signature"');
  });
});

describe('NUL characters', () => {
  it('are refused with 400 wherever they appear', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ amount: '1', currency: 'USD', order_id: 'a\u0000b' }, 'order_id'],
      [{ amount: '1', currency: 'USD', order_id: 'nul-2', metadata: { 'k\u0000': 'v' } }, 'metadata[k\u0000]'],
      [{ amount: '1', currency: 'USD', order_id: 'nul-3', description: '\u0000' }, 'description'],
    ];
    for (const [body, param] of cases) {
      const r = await shop.post('/api/v1/checkout/sessions/create', body);
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'parameter_invalid', param });
    }
    const q = await shop.get('/api/v1/checkout/sessions?order_id=%00');
    expect(q.status).toBe(400);
  });
});
