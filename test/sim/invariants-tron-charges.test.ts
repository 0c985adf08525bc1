import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evmHexToTron, tronBase58 } from '../../chains/tron/address.js';
import type { InvariantContext } from '../../scripts/sim/contract.js';
import { CHARGES, renewalPeriodChargedOnce } from '../../scripts/sim/invariants/charges.js';
import { OUTBOUND_ONCE, outboundMovedMoneyAtMostOnce } from '../../scripts/sim/invariants/outbound-once.js';
import { REDIS_URL } from '../support/env.js';
import { rolledBack } from '../support/sim-invariant-harness.js';
import { startTronSubsFixture, type TronSubsFixture } from '../integration/subscriptions-tron-fixture.js';

// The simulator's charge invariants on TRON (scripts/sim/invariants/charges.ts, outbound-once.ts), over a REAL charge:
// a subscription authorized by a TronLink-style approve on the fake java-tron, its first period charged by the
// merchant's charger (transferFrom through the wallet API), read back through java-tron's JSON-RPC with the ledger's
// base58 / `41…` addresses in 0x form (tron-chain.ts `evmLikeOf`). Both hold on it; a charge marked failed although
// its transaction moved the money is reported by both. (Before TRON was read, the real state itself was reported:
// "paid but no charge of it moved money".)

let f: TronSubsFixture;
let subscriptionId: string;

const context = (db: InvariantContext['db']): InvariantContext => ({
  db,
  chains: {
    evm: [],
    tron: {
      walletApiUrl: f.fake.url,
      jsonRpcUrl: `${f.fake.url}/jsonrpc`,
      tokens: { USDT: tronBase58(evmHexToTron(f.tokens.USDT.address)), USDC: f.tokens.USDC.address },
      confirmations: 3,
    },
  },
  deliveries: [],
  events: [],
  redis: { url: REDIS_URL, prefix: 'sp_unused' },
});

/** The invariants' findings about money on chain, leaving out webhook deliveries (this fixture has no receiver). */
const moneyFindings = (vs: Array<{ invariant: string; message: string }>) =>
  vs.filter((v) => (v.invariant === CHARGES || v.invariant === OUTBOUND_ONCE) && !v.message.includes('never reached the receiver'));

beforeAll(async () => {
  f = await startTronSubsFixture({ start: new Date('2027-01-31T10:00:00Z') });
  const customer = await f.customer(41, { usdt: 50_000_000n });
  const sub = await f.create({
    items: [
      {
        price_data: { price_id: 'price_sim', currency: 'USD', product: 'Sim', unit_amount: 700, recurring: { interval: 'month' } },
        quantity: 1,
      },
    ],
    customer: 'cus_sim_tron',
  });
  subscriptionId = sub.id as string;
  await f.authorize(subscriptionId, customer);
  await f.settle();
}, 180_000);
afterAll(async () => f?.close());

describe('charge invariants on TRON (simulator)', () => {
  it('hold on a real TRON charge: one transferFrom from the customer to the settlement wallet', async () => {
    const charges = await f.h.t.db.selectFrom('subscription_charges').select(['state', 'network', 'tx_hash']).execute();
    expect(charges).toEqual([expect.objectContaining({ state: 'succeeded', network: 'tron' })]);
    const invoices = await f.h.t.db.selectFrom('invoices').select('status').where('subscription_id', '=', subscriptionId).execute();
    expect(invoices.map((i) => i.status)).toEqual(['paid']);
    expect(moneyFindings(await renewalPeriodChargedOnce(context(f.h.t.db)))).toEqual([]);
    expect(moneyFindings(await outboundMovedMoneyAtMostOnce(context(f.h.t.db), { scanHotWallets: false }))).toEqual([]);
  });

  it('report a TRON charge marked failed whose transaction moved the money', async () => {
    const [charges, once] = await rolledBack(f.h.t.db, async (trx) => {
      await trx.updateTable('subscription_charges').set({ state: 'failed' }).where('network', '=', 'tron').execute();
      return [
        moneyFindings(await renewalPeriodChargedOnce(context(trx))),
        moneyFindings(await outboundMovedMoneyAtMostOnce(context(trx), { scanHotWallets: false })),
      ];
    });
    expect(charges.map((v) => v.message).some((m) => m.includes('is paid with 0 succeeded charges'))).toBe(true);
    expect(charges.map((v) => v.message).some((m) => m.includes('no charge of it moved money'))).toBe(false);
    expect(once.map((v) => v.message)).toEqual([expect.stringMatching(/^charge \S+ failed but its transaction \S+ moved money/)]);
  });
});
