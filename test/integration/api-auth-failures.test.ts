import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { SignedClient, type TestResponse } from '../support/signed-client.js';

// Issue 34 item 7: the failed-authentication limit per client IP (docs/rate-limits.md "Failed authentications") over
// real HTTP and real Redis. Several merchants share one egress IP (X-Forwarded-For, trusted here): one of them
// misconfigured (a wrong signing secret) must not lock the others out, while a blocked IP still cannot force an
// unbounded number of key lookups and signature checks.

const LIST = '/api/v1/checkout/sessions';
const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
const BUDGET = 3; // failed authentications per IP per minute

let h: ApiHarness;
beforeAll(async () => {
  h = await startApiHarness({
    trustProxy: true,
    rateLimits: { perKeyPerSecond: 0, perIpPerSecond: 0, authFailuresPerIpPerMinute: BUDGET },
  });
});
afterAll(async () => h?.close());

function expect429(r: TestResponse, message: RegExp) {
  expect(r.status).toBe(429);
  expect(r.json.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded', message: expect.stringMatching(message) });
  expect(r.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
}

describe('failed authentications behind a shared egress IP', () => {
  it("one client's bad signatures do not refuse another merchant's valid requests from the same IP", async () => {
    const ip = '203.0.113.40';
    const broken = (await h.merchant('Misconfigured')).test;
    const fine = (await h.merchant('Well configured')).test;
    for (let i = 0; i < BUDGET; i++) expect((await broken.get(LIST, { signWith: 'wrong', ...from(ip) })).status).toBe(401);
    // The IP's failure budget is spent. The other merchant proves its secret: served, again and again.
    for (let i = 0; i < 3; i++) expect((await fine.get(LIST, from(ip))).status).toBe(200);

    // The failing key keeps its own budget while the IP is throttled; then 429 before any lookup.
    const answers: number[] = [];
    for (let i = 0; i < 9; i++) answers.push((await broken.get(LIST, { signWith: 'wrong', ...from(ip) })).status);
    expect(answers.filter((s) => s === 401).length).toBe(BUDGET);
    expect(answers.slice(BUDGET).every((s) => s === 429)).toBe(true);
    expect429(
      await broken.get(LIST, { signWith: 'wrong', ...from(ip) }),
      /Too many failed authentications from this address with this API key\./,
    );
    for (let i = 0; i < 3; i++) expect((await fine.get(LIST, from(ip))).status).toBe(200);
    // The throttled key is refused from that IP even with a valid signature (the check comes before the signature is
    // verified: that is what bounds the verifications), but is served from elsewhere.
    expect429(await broken.get(LIST, from(ip)), /with this API key/);
    expect((await broken.get(LIST, from('203.0.113.41'))).status).toBe(200);
  });

  it('bounds the verifications a throttled IP can force with ever new keys, and says so', async () => {
    const ip = '203.0.113.50';
    const answers: number[] = [];
    for (let i = 0; i < 60; i++) {
      const stranger = new SignedClient(h.baseUrl, { key: `sk_test_Unknown${i}x${Date.now()}`, secret: 'nope' });
      answers.push((await stranger.get(LIST, from(ip))).status);
    }
    const lookups = answers.filter((s) => s === 401).length;
    // The IP's budget plus the throttled IP's cap (10 x the budget per minute, a little refill meanwhile); the rest
    // is refused before the key is looked up.
    expect(lookups).toBeGreaterThanOrEqual(BUDGET + 10 * BUDGET);
    expect(lookups).toBeLessThanOrEqual(BUDGET + 10 * BUDGET + 2);
    expect(answers.at(-1)).toBe(429);
    const fine = (await h.merchant('Late')).test;
    // Once a flood of key guesses has spent the cap, the address is refused as a whole until it refills.
    expect429(await fine.get(LIST, from(ip)), /Too many failed authentications from this address\./);
    expect((await fine.get(LIST, from('203.0.113.51'))).status).toBe(200);
  });
});
