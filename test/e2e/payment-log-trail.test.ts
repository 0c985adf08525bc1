import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceHarness, type ServiceHarness } from '../support/service-harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

// Item 4 of issue 18: one grep for a session id follows its payment through the service's logs (docs/operations.md,
// "Logs"): deposit seen -> deposit credited -> session paid -> payment.completed delivered, each line with the ids.
let h: ServiceHarness;
let receiver: WebhookReceiver;
const lines: string[] = [];

beforeAll(async () => {
  h = await startServiceHarness({ extraEnv: { LOG_LEVEL: 'info' }, logOut: (l) => void lines.push(l) });
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

describe('log trail of one payment', () => {
  it('every step of a paid session logs its session_id, with tx_hash, network, mode and event_id where they exist', async () => {
    const m = await h.newMerchant('Log trail shop', receiver.url);
    receiver.secrets.push(m.webhookSecret);
    const { id } = await h.paidSession(m, { amount: '3.21', token: 'USDC' });
    await h.until(async () => (lines.some((l) => l.includes(id) && l.includes('webhook: delivered')) ? true : undefined));

    // The grep: every line naming the session, parsed.
    const trail = lines.filter((l) => l.includes(id)).map((l) => JSON.parse(l) as Record<string, unknown>);
    const msgs = trail.map((l) => l.msg);
    const at = (msg: string) => msgs.indexOf(msg);
    for (const msg of ['deposit seen', 'deposit credited', 'session paid', 'webhook: delivered'])
      expect(at(msg), msg).toBeGreaterThanOrEqual(0);
    expect(at('deposit seen')).toBeLessThan(at('deposit credited'));
    expect(at('deposit credited')).toBeLessThanOrEqual(at('session paid'));
    expect(at('session paid')).toBeLessThan(at('webhook: delivered'));
    // The session id is a structured field, not text in a message.
    for (const l of trail) expect(l.session_id, String(l.msg)).toBe(id);

    const seen = trail[at('deposit seen')]!;
    expect(seen).toMatchObject({ network: 'ethereum', mode: 'test', token: 'USDC', amount_base: '3210000' });
    expect(seen.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(trail[at('deposit credited')]).toMatchObject({
      network: 'ethereum',
      mode: 'test',
      tx_hash: seen.tx_hash,
      deposit_id: seen.deposit_id,
    });
    expect(trail[at('session paid')]).toMatchObject({ network: 'ethereum', mode: 'test', tx_hash: seen.tx_hash });
    const delivered = trail[at('webhook: delivered')]!;
    expect(delivered).toMatchObject({ event_type: 'payment.completed', mode: 'test', outcome: 'delivered' });
    expect(delivered.event_id).toMatch(/^evt_/);
    // ... and the event id leads to the same delivery the receiver got.
    expect(receiver.received.some((r) => JSON.stringify(r).includes(String(delivered.event_id)))).toBe(true);
  }, 90_000);
});
