import { Interface, parseUnits } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tronToEvmHex } from '../../chains/tron/address.js';
import type { RpcReceipt } from '../../chains/evm/rpc-types.js';
import { TRANSFER_TOPIC } from '../../chains/evm/transfer-log.js';
import { jsonRpc } from '../../scripts/sim/faults/rpc.js';
import { SINGLE_CREDIT, noTransferCreditedTwice } from '../../scripts/sim/invariants/single-credit.js';
import { fund, walletAt } from '../support/evm-tokens/scenario.js';
import type { InvariantContext } from '../../scripts/sim/contract.js';
import { CHARGES, renewalPeriodChargedOnce } from '../../scripts/sim/invariants/charges.js';
import { OUTBOUND_ONCE, outboundMovedMoneyAtMostOnce } from '../../scripts/sim/invariants/outbound-once.js';
import { rolledBack, tronSimContext } from '../support/sim-invariant-harness.js';
import { startTronSubsFixture, type TronSubsFixture } from '../integration/subscriptions-tron-fixture.js';

// The simulator's charge invariants on TRON (scripts/sim/invariants/charges.ts, outbound-once.ts), over a REAL charge:
// a subscription authorized by a TronLink-style approve on the fake java-tron, its first period charged by the
// merchant's charger (transferFrom through the wallet API), read back through java-tron's JSON-RPC with the ledger's
// base58 / `41…` addresses in 0x form (tron-chain.ts `evmLikeOf`). Both hold on it; a charge marked failed although
// its transaction moved the money is reported by both. (Before TRON was read, the real state itself was reported:
// "paid but no charge of it moved money".) The renewal is mined in one block after another token transfer, as on a
// real chain: the service names its transfer by the JSON-RPC's block-wide log index, as detection names every other
// TRON log (before, the wallet API's index within the transaction: seed 1049, docs/simulation.md "What it found" 13).

let f: TronSubsFixture;
let subscriptionId: string;

const context = (db: InvariantContext['db']): InvariantContext =>
  tronSimContext(db, { fakeUrl: f.fake.url, usdt: f.tokens.USDT.address, usdc: f.tokens.USDC.address, redisPrefix: 'sp_unused' });

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

  // The renewal: its charge shares a block with an unrelated USDC transfer that goes first (a higher tip).
  const other = walletAt(43, f.node.provider);
  await f.node.rpc('anvil_setBalance', [other.address, '0xde0b6b3a7640000']);
  await fund(f.tokens.USDC, other.address, 1_000_000n);
  const s = (await f.client.get(`/api/v1/subscriptions/${subscriptionId}`)).json;
  f.clock.set(new Date(s.current_period_end * 1000 + 1000));
  await f.node.rpc('evm_setAutomine', [false]);
  const pending = async () => Number(BigInt((await f.node.rpc<{ pending: string }>('txpool_status', [])).pending));
  const miner = (async () => {
    for (let i = 0; (await pending()) < 1; i++) {
      if (i > 1200) throw new Error('the renewal charge never reached the pool');
      await new Promise((r) => setTimeout(r, 25));
    }
    await other.sendTransaction({
      to: f.tokens.USDC.address,
      data: new Interface(['function transfer(address,uint256)']).encodeFunctionData('transfer', [other.address, 1n]),
      maxPriorityFeePerGas: parseUnits('50', 'gwei'),
      maxFeePerGas: parseUnits('100', 'gwei'),
    });
    while ((await pending()) < 2) await new Promise((r) => setTimeout(r, 25));
    await f.node.rpc('anvil_mine', ['0x1']);
  })();
  try {
    await Promise.all([f.settle(), miner]);
  } finally {
    await f.node.rpc('evm_setAutomine', [true]);
  }
}, 180_000);
afterAll(async () => f?.close());

describe('charge invariants on TRON (simulator)', () => {
  it('hold on real TRON charges: one transferFrom from the customer to the settlement wallet per period', async () => {
    const charges = await f.h.t.db.selectFrom('subscription_charges').select(['state', 'network', 'tx_hash']).execute();
    expect(charges).toEqual([
      expect.objectContaining({ state: 'succeeded', network: 'tron' }),
      expect.objectContaining({ state: 'succeeded', network: 'tron' }),
    ]);
    const invoices = await f.h.t.db.selectFrom('invoices').select('status').where('subscription_id', '=', subscriptionId).execute();
    expect(invoices.map((i) => i.status)).toEqual(['paid', 'paid']);
    expect(moneyFindings(await renewalPeriodChargedOnce(context(f.h.t.db)))).toEqual([]);
    expect(moneyFindings(await outboundMovedMoneyAtMostOnce(context(f.h.t.db), { scanHotWallets: false }))).toEqual([]);
    expect((await noTransferCreditedTwice(context(f.h.t.db))).filter((v) => v.invariant === SINGLE_CREDIT)).toEqual([]);
  });

  it("name each charge's transfer by java-tron's JSON-RPC (block-wide) log index, as detection names every TRON log", async () => {
    const deposits = await f.h.t.db
      .selectFrom('deposits')
      .select(['tx_hash', 'log_index'])
      .where('network', '=', 'tron')
      .orderBy('block_number')
      .execute();
    expect(deposits).toHaveLength(2);
    const indexes: number[] = [];
    for (const d of deposits) {
      const r = await jsonRpc<RpcReceipt>(`${f.fake.url}/jsonrpc`, 'eth_getTransactionReceipt', [`0x${d.tx_hash}`]);
      const transfer = r.logs.find(
        (l) => l.topics[0] === TRANSFER_TOPIC && l.address.toLowerCase() === f.tokens.USDT.address.toLowerCase(),
      );
      expect(transfer, `the charge ${d.tx_hash} holds a USDT Transfer`).toBeDefined();
      expect(BigInt(transfer!.topics[2]!)).toBe(BigInt(tronToEvmHex(f.wallets.settlement)));
      expect(d.log_index).toBe(Number(BigInt(transfer!.logIndex)));
      indexes.push(d.log_index);
    }
    // The renewal's block holds the unrelated transfer first: the two numberings differ there (the test proves it).
    expect(indexes[1]).toBeGreaterThan(0);
  });

  it('report a TRON charge marked failed whose transaction moved the money', async () => {
    const [charges, once] = await rolledBack(f.h.t.db, async (trx) => {
      const first = await trx.selectFrom('subscription_charges').select('id').orderBy('id').executeTakeFirstOrThrow();
      await trx.updateTable('subscription_charges').set({ state: 'failed' }).where('id', '=', first.id).execute();
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
