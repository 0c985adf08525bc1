import type { Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscriptionsCli } from '../../src/cli/subscriptions.js';
import { runSchedulerTick } from '../../src/subscriptions/scheduler.js';
import { plan, startSubsFixture, type SubsFixture } from './subscriptions-fixture.js';

// Issue 34 item 6: a charge whose tokens left the customer for another address than the settlement address
// (`wrong_recipient`) is not a customer who lacks funds. Retrying it would take the customer's money a second time,
// so the subscription is not sent into dunning: it is held for an operator (extension `operator_hold`), who resolves
// it with `subscriptions resolve` (retry the invoice, or cancel).

let f: SubsFixture;
const T0 = new Date('2027-11-01T00:00:00Z');
const DAY = 86_400_000;
const ELSEWHERE = `0x${'5b'.repeat(20)}`;
beforeAll(async () => {
  f = await startSubsFixture({ start: T0 });
}, 120_000);
afterAll(async () => f?.close());

async function activeDailySub(index: number): Promise<{ id: string; customer: Wallet }> {
  const customer = await f.customer(index, 100_000_000n);
  const s = await f.create({ ...plan({ recurring: { interval: 'day' } }), customer: `cus_wr_${index}` });
  await f.authorize(s.id, customer, 'USDT');
  await f.settle();
  expect((await f.client.get(`/api/v1/subscriptions/${s.id}`)).json.status).toBe('active');
  return { id: s.id, customer };
}

const charges = (subId: string) =>
  f.h.t.db.selectFrom('subscription_charges').selectAll().where('subscription_id', '=', subId).orderBy('id').execute();

/** The next day's renewal is signed and broadcast; before it is mined the charge is made to name another settlement
 * address, so its receipt shows the customer's tokens gone elsewhere (what a token forwarding the transfer would do). */
async function renewalToWrongRecipient(...subIds: string[]): Promise<void> {
  f.clock.set(new Date(f.clock.now().getTime() + DAY + 60_000));
  await f.node.rpc('evm_setAutomine', [false]);
  try {
    const renewals = async () => Promise.all(subIds.map(async (id) => (await charges(id))[1]));
    for (let i = 0; i < 20; i++) {
      await runSchedulerTick(f.deps);
      if ((await renewals()).every((c) => c?.state === 'broadcast')) break;
    }
    for (const c of await renewals()) {
      expect(c?.state).toBe('broadcast');
      await f.h.t.db.updateTable('subscription_charges').set({ destination_address: ELSEWHERE }).where('id', '=', c!.id).execute();
    }
    await f.node.rpc('evm_mine', []);
  } finally {
    await f.node.rpc('evm_setAutomine', [true]);
  }
  await f.settle();
}

describe('a charge failing wrong_recipient', () => {
  it('holds the subscription for an operator instead of dunning: no past_due, no retry, visible in the API and the events', async () => {
    const { id } = await activeDailySub(500);
    await renewalToWrongRecipient(id);
    const c = await charges(id);
    expect(c.map((x) => x.state)).toEqual(['succeeded', 'failed']);
    expect(c[1]!.failure_reason).toMatch(/^wrong_recipient:/);

    const sub = (await f.client.get(`/api/v1/subscriptions/${id}`)).json;
    expect(sub.status).toBe('active'); // the spec's status is kept: the customer's tokens did leave their wallet
    expect(sub.operator_hold).toMatchObject({ reason: 'wrong_recipient', charge_transaction: c[1]!.tx_hash });
    const row = await f.h.t.db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.next_action).toBeNull();
    const events = await f.events(id);
    expect(events).not.toContain('subscription.past_due');
    expect(events).not.toContain('invoice.payment_failed');
    expect(events.at(-1)).toBe('subscription.updated');

    // Days pass: nothing retries it, nothing renews it.
    f.clock.set(new Date(f.clock.now().getTime() + 6 * DAY));
    await f.settle();
    expect((await charges(id)).length).toBe(2);
    expect((await f.client.get(`/api/v1/subscriptions/${id}`)).json).toMatchObject({ status: 'active' });
  }, 180_000);

  it('is listed for the operator, and `subscriptions resolve --retry` charges the open invoice again; `--cancel` cancels', async () => {
    const a = await activeDailySub(501);
    const b = await activeDailySub(502);
    await renewalToWrongRecipient(a.id, b.id);
    const cli = async (...args: string[]) => {
      let printed: any;
      await subscriptionsCli(args, { db: f.h.t.db, clock: f.clock, checkoutBaseUrl: f.deps.checkoutBaseUrl, out: (v) => (printed = v) });
      return printed;
    };
    const held = (await cli('held')) as Array<{ subscription_id: string; reason: string; transaction_hash: string }>;
    const mine = held.filter((h) => [a.id, b.id].includes(h.subscription_id)).map((h) => [h.subscription_id, h.reason]);
    expect(mine.sort()).toEqual(
      [
        [a.id, 'wrong_recipient'],
        [b.id, 'wrong_recipient'],
      ].sort(),
    );
    await expect(cli('resolve', a.id)).rejects.toThrow(/--retry\|--cancel/);

    expect(await cli('resolve', a.id, '--retry')).toMatchObject({ subscription_id: a.id, resolution: 'retry', status: 'active' });
    await f.settle();
    const ac = await charges(a.id);
    expect(ac.slice(0, 3).map((x) => x.state)).toEqual(['succeeded', 'failed', 'succeeded']);
    expect(ac[2]!.invoice_id).toBe(ac[1]!.invoice_id); // the same open invoice, paid now
    const aSub = (await f.client.get(`/api/v1/subscriptions/${a.id}`)).json;
    expect(aSub).toMatchObject({ status: 'active', operator_hold: null });
    await expect(cli('resolve', a.id, '--retry')).rejects.toThrow(/is not held/);

    expect(await cli('resolve', b.id, '--cancel')).toMatchObject({ subscription_id: b.id, resolution: 'cancel', status: 'canceled' });
    const bSub = (await f.client.get(`/api/v1/subscriptions/${b.id}`)).json;
    expect(bSub).toMatchObject({ status: 'canceled', operator_hold: null });
    const bInvoice = (await f.client.get(`/api/v1/invoices/${(await charges(b.id))[1]!.invoice_id}`)).json;
    expect(bInvoice.status).toBe('void');
    expect((await cli('held')).map((h: { subscription_id: string }) => h.subscription_id)).not.toContain(b.id);
    expect((await f.client.post(`/api/v1/subscriptions/${a.id}/cancel`, {})).status).toBe(200);
  }, 240_000);
});
