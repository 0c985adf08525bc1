import { spawn } from 'node:child_process';
import { id as keccak, zeroPadValue } from 'ethers';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/database.js';
import { pollApprovals } from '../../src/subscriptions/approval-poller.js';
import { runSchedulerTick } from '../../src/subscriptions/scheduler.js';
import { subscriptionEngineDeps } from '../../src/subscriptions/worker.js';
import { CHECKOUT_BASE } from '../support/api-harness.js';
import { signer } from '../support/evm-tokens/scenario.js';
import { plan, startSubsFixture, type SubsFixture } from './subscriptions-fixture.js';

// Each (subscription, period) is charged exactly once: two schedulers at once over their own connection pools, and a
// scheduler process SIGKILLed between storing a signed charge and broadcasting it. Counted on chain, not only in SQL.
// The scheduler keeps no state in Redis, so a Redis flush cannot lose or repeat a renewal (nothing to flush).

let f: SubsFixture;
const N = 12;
const T0 = new Date('2027-06-01T00:00:00Z');
beforeAll(async () => {
  f = await startSubsFixture({ start: T0 });
}, 120_000);
afterAll(async () => f?.close());

async function transfersTo(address: string): Promise<Array<{ tx: string; from: string }>> {
  const logs = await f.node.rpc<Array<{ transactionHash: string; topics: string[] }>>('eth_getLogs', [
    {
      fromBlock: '0x0',
      toBlock: 'latest',
      address: f.tokens.USDT.address,
      topics: [keccak('Transfer(address,address,uint256)'), null, zeroPadValue(address, 32)],
    },
  ]);
  return logs.map((l) => ({ tx: l.transactionHash, from: `0x${l.topics[1]!.slice(-40)}` }));
}

async function chargesPerPeriod(): Promise<Array<{ subscription_id: string; period_number: number; succeeded: number }>> {
  const r = await sql<{ subscription_id: string; period_number: number; succeeded: number }>`
    select i.subscription_id, i.period_number, count(c.id) filter (where c.state = 'succeeded')::int as succeeded
    from invoices i left join subscription_charges c on c.invoice_id = i.id group by 1, 2`.execute(f.h.t.db);
  return r.rows;
}

describe('scheduler', () => {
  it('two schedulers at once charge each period once', async () => {
    const subs: string[] = [];
    for (let i = 0; i < N; i++) {
      const customer = await f.customer(200 + i, 100_000_000n);
      const s = await f.create({ ...plan({ recurring: { interval: 'day' } }), customer: `cus_${i}` });
      await f.authorize(s.id, customer);
      subs.push(s.id);
    }
    await pollApprovals({ ...f.deps, initialLookback: 10_000n });
    const due = await f.h.t.db.selectFrom('subscriptions').select('id').where('next_action_at', '<=', T0).execute();
    expect(due.length).toBe(N);

    const dbA = createDb(f.h.t.url, 6);
    const dbB = createDb(f.h.t.url, 6);
    const mk = (db: typeof dbA) =>
      subscriptionEngineDeps({
        db,
        adapters: f.deps.adapters,
        signer,
        settings: f.deps.settings,
        checkoutBaseUrl: CHECKOUT_BASE,
        clock: f.clock,
      });
    const [a, b] = [mk(dbA), mk(dbB)];
    for (let round = 0; round < 30; round++) {
      const [ra, rb] = await Promise.all([runSchedulerTick(a, { chargeConcurrency: 4 }), runSchedulerTick(b, { chargeConcurrency: 4 })]);
      if (ra.due + rb.due + ra.chargesOpen + rb.chargesOpen + ra.chargesSettled + rb.chargesSettled === 0) break;
    }
    await Promise.all([dbA.destroy(), dbB.destroy()]);
    const rows = await chargesPerPeriod();
    expect(rows.length).toBe(N);
    expect(rows.every((r) => r.succeeded === 1)).toBe(true);
    const w = await f.deps.walletResolver.wallets(f.merchantId, 'test', 'ethereum');
    const onChain = await transfersTo(w.settlement);
    expect(onChain.length).toBe(N);
    expect(new Set(onChain.map((t) => t.from)).size).toBe(N);
    for (const id of subs) expect((await f.client.get(`/api/v1/subscriptions/${id}`)).json.status).toBe('active');
  }, 120_000);

  it('a scheduler killed after signing a charge: the survivor re-broadcasts the same bytes; each period charged once', async () => {
    const next = new Date(T0.getTime() + 86_400_000);
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/integration/subscriptions-tick-child.ts'], {
      env: {
        ...process.env,
        SUBS_DB_URL: f.h.t.url,
        SUBS_RPC_URL: f.node.url,
        SUBS_USDT: f.tokens.USDT.address,
        SUBS_USDC: f.tokens.USDC.address,
        SUBS_NOW: String(next.getTime()),
        SP_FAILPOINTS: 'outbound:after_sign',
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const watchdog = setTimeout(() => child.kill('SIGTERM'), 60_000); // a hung child fails the SIGKILL assertion below
    const death = await new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    clearTimeout(watchdog);
    expect(death.signal).toBe('SIGKILL');

    const signed = await f.h.t.db.selectFrom('subscription_charges').selectAll().where('state', '=', 'signed').execute();
    expect(signed.length).toBe(1);
    const w = await f.deps.walletResolver.wallets(f.merchantId, 'test', 'ethereum');
    expect((await transfersTo(w.settlement)).length).toBe(N); // the signed bytes never left the dead process

    // Two survivors at once, at the same moment.
    f.clock.set(next);
    await Promise.all([f.settle(), f.settle()]);
    const rows = await chargesPerPeriod();
    expect(rows.length).toBe(2 * N);
    expect(rows.every((r) => r.succeeded === 1)).toBe(true);
    const onChain = await transfersTo(w.settlement);
    expect(onChain.length).toBe(2 * N);
    expect(onChain.map((t) => t.tx)).toContain(signed[0]!.tx_hash);
    // Nonces gapless: every charge transaction of the charger used one nonce, none wasted.
    expect(await f.node.provider.getTransactionCount(w.charger)).toBe(2 * N);
    const failed = await f.h.t.db.selectFrom('subscription_charges').select('id').where('state', '=', 'failed').execute();
    expect(failed.length).toBe(0);
  }, 120_000);
});
