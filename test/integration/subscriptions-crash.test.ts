import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plan, startSubsFixture, type SubsFixture } from './subscriptions-fixture.js';
import { transfersFrom } from '../support/chain-watch.js';

// Crash injection for charges, at every failpoint of the outbound engine (src/outbound/failpoints.ts): a scheduler
// process (subscriptions-tick-child.ts) SIGKILLs itself there during a renewal; two survivors then tick at once.
// Whatever the point, the period is charged exactly once, counted on chain, with the bytes signed before the crash.

let f: SubsFixture;
const T0 = new Date('2027-11-01T00:00:00Z');
const DAY = 86_400_000;
beforeAll(async () => {
  f = await startSubsFixture({ start: T0 });
}, 120_000);
afterAll(async () => f?.close());

/** Hashes of the transactions that moved USDT from `owner`, read straight from the node. */
async function usdtTransfersFrom(owner: string): Promise<string[]> {
  return (await transfersFrom(f.node, f.tokens.USDT.address, owner)).map((t) => t.tx);
}

function runTickChild(now: Date, failpoint: string): Promise<{ code: number | null; signal: string | null }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/integration/subscriptions-tick-child.ts'], {
    env: {
      ...process.env,
      SUBS_DB_URL: f.h.t.url,
      SUBS_RPC_URL: f.node.url,
      SUBS_USDT: f.tokens.USDT.address,
      SUBS_USDC: f.tokens.USDC.address,
      SUBS_NOW: String(now.getTime()),
      SP_FAILPOINTS: failpoint,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const watchdog = setTimeout(() => child.kill('SIGTERM'), 60_000); // a hung child fails the SIGKILL assertion
  return new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      clearTimeout(watchdog);
      resolve({ code, signal });
    }),
  );
}

describe.each([
  ['outbound:after_sign', 'signed', false],
  ['outbound:after_broadcast', 'signed', true],
  ['outbound:after_receipt', 'broadcast', true],
] as const)('a scheduler killed at %s', (failpoint, stateAtDeath, minedAtDeath) => {
  it('leaves exactly one transfer on chain for the period, the bytes signed before the crash, and the invoice paid once', async () => {
    const index = 400 + ['outbound:after_sign', 'outbound:after_broadcast', 'outbound:after_receipt'].indexOf(failpoint);
    const customer = await f.customer(index, 100_000_000n);
    const sub = await f.create({ ...plan({ recurring: { interval: 'day' } }), customer: `cus_crash_${index}` });
    await f.authorize(sub.id, customer);
    await f.settle();
    expect((await f.client.get(`/api/v1/subscriptions/${sub.id}`)).json.status).toBe('active');
    expect(await usdtTransfersFrom(customer.address)).toHaveLength(1);

    const renewal = new Date(f.clock.now().getTime() + DAY + 60_000);
    const death = await runTickChild(renewal, failpoint);
    expect(death.signal).toBe('SIGKILL');
    const charges = () =>
      f.h.t.db.selectFrom('subscription_charges').selectAll().where('subscription_id', '=', sub.id).orderBy('id').execute();
    const atDeath = (await charges())[1]!;
    expect(atDeath.state).toBe(stateAtDeath);
    const attemptsAtDeath = await f.h.t.db
      .selectFrom('subscription_charge_attempts')
      .selectAll()
      .where('charge_id', '=', atDeath.id)
      .execute();
    expect(attemptsAtDeath).toHaveLength(1);
    expect(await usdtTransfersFrom(customer.address)).toHaveLength(minedAtDeath ? 2 : 1);

    // Two survivors at once, at the same moment.
    f.clock.set(renewal);
    await Promise.all([f.settle(), f.settle()]);
    const after = await charges();
    expect(after.map((c) => c.state)).toEqual(['succeeded', 'succeeded']);
    expect(after[1]!.tx_hash).toBe(attemptsAtDeath[0]!.tx_hash); // the same signed bytes: never signed again
    const attempts = await f.h.t.db
      .selectFrom('subscription_charge_attempts')
      .select('tx_hash')
      .where('charge_id', '=', atDeath.id)
      .execute();
    expect(attempts).toHaveLength(1);
    const onChain = await usdtTransfersFrom(customer.address);
    expect(onChain).toHaveLength(2); // one per period, counted on chain
    expect(onChain[1]).toBe(attemptsAtDeath[0]!.tx_hash);
    const events = await f.events(sub.id);
    expect(events.filter((e) => e === 'invoice.paid')).toHaveLength(2);
    expect(events.filter((e) => e === 'invoice.payment_failed')).toHaveLength(0);
    // Out of the way of the next case's renewal.
    expect((await f.client.post(`/api/v1/subscriptions/${sub.id}/cancel`, {})).status).toBe(200);
  }, 120_000);
});
