import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transaction } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import type { InvariantContext } from '../../scripts/sim/contract.js';
import { SESSION_PAID, sessionPaidIffChain } from '../../scripts/sim/invariants/session-paid.js';
import { SINGLE_CREDIT, noTransferCreditedTwice } from '../../scripts/sim/invariants/single-credit.js';
import { OUTBOUND_ONCE, outboundMovedMoneyAtMostOnce } from '../../scripts/sim/invariants/outbound-once.js';
import type { ChainHarnessMerchant } from '../support/chain-service-harness.js';
import { startTronServiceHarness, type TronServiceHarness } from '../support/tron-service-harness.js';
import { tronHarnessContext } from '../support/sim-invariant-harness.js';
import { ChainRegistry } from '../../chains/chain-registry.js';
import { reconcile } from '../../src/reconcile/reconcile.js';
import { JOURNAL, journalReconcilesWithChains } from '../../scripts/sim/invariants/journal.js';
import { otherChainAdapters } from '../../scripts/sim/invariants/other-adapters.js';

// session-paid-iff-chain on TRON: the whole service on the fake java-tron (over Anvil), a session paid by a real
// TRC-20 transfer, read back through java-tron's Ethereum-compatible JSON-RPC with the ledger's `41…` addresses
// converted (scripts/sim/invariants/tron-chain.ts).

let h: TronServiceHarness;
let shop: ChainHarnessMerchant;
let paid: { id: string };
let refundId: string;

const context = (db: InvariantContext['db']): InvariantContext => tronHarnessContext(h)(db);

class Rollback extends Error {}
async function corrupted<T>(f: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  let result: T | undefined;
  await h.t.db
    .transaction()
    .execute(async (trx) => {
      result = await f(trx);
      throw new Rollback();
    })
    .catch((e) => {
      if (!(e instanceof Rollback)) throw e;
    });
  return result as T;
}

beforeAll(async () => {
  h = await startTronServiceHarness();
  shop = await h.newMerchant('Tron sim');
  await h.fundHotWallet(shop);
  paid = await h.paidSession(shop, { amount: '3.25', token: 'USDT' });
  const created = await h.createRefund(shop, { session_id: paid.id, amount: 100, currency: 'USDT' });
  expect(created.status).toBe(201);
  const done = await h.settled(shop, created.json.refund_id, 90_000);
  expect(done.status).toBe('completed');
  refundId = done.id as string;
}, 240_000);
afterAll(async () => {
  await h?.close();
});

describe('chain-reading invariants on TRON', () => {
  it('holds on a real paid session and reports it once set back to open', async () => {
    expect(await sessionPaidIffChain(context(h.t.db))).toEqual([]);
    const vs = await corrupted(async (trx) => {
      await trx.updateTable('payment_sessions').set({ status: 'open' }).where('id', '=', paid.id).execute();
      return sessionPaidIffChain(context(trx));
    });
    expect(vs.map((v) => [v.invariant, v.subject])).toEqual([[SESSION_PAID, paid.id]]);
    expect(vs[0]!.message).toMatch(/is open but the canonical chain holds 3250000 of 3250000 base units of USDT .*\(tron\)/);
  });

  it('credits and refunds: hold on the real state; a ghost credit and a completed refund said failed are reported', async () => {
    expect(await noTransferCreditedTwice(context(h.t.db))).toEqual([]);
    expect(await outboundMovedMoneyAtMostOnce(context(h.t.db))).toEqual([]);
    const dep = await h.t.db.selectFrom('deposits').selectAll().where('session_id', '=', paid.id).executeTakeFirstOrThrow();
    const ghost = 'ab'.repeat(32);
    const vs = await corrupted(async (trx) => {
      await trx
        .insertInto('deposits')
        .values({ ...dep, id: 'dep_tron_ghost', tx_hash: ghost })
        .execute();
      await trx.updateTable('refunds').set({ status: 'failed' }).where('id', '=', refundId).execute();
      return [...(await noTransferCreditedTwice(context(trx))), ...(await outboundMovedMoneyAtMostOnce(context(trx)))];
    });
    expect(vs.filter((v) => v.invariant === SINGLE_CREDIT).map((v) => v.subject)).toEqual(
      expect.arrayContaining([`tron/test/${ghost}:${dep.log_index}`, paid.id]),
    );
    expect(vs.filter((v) => v.invariant === OUTBOUND_ONCE).map((v) => v.subject)).toEqual([refundId]);
  });

  it("the journal invariant reconciles tron through the service's adapter on the chain's own URL, naming each failing difference", async () => {
    const ctx = context(h.t.db);
    const report = await reconcile({ db: h.t.db, adapters: new ChainRegistry(await otherChainAdapters(ctx.chains)) });
    expect(report.chains.map((c) => `${c.network}/${c.mode}`)).toEqual(['tron/test']);
    expect(report.chains[0]!.skipped).toBeUndefined();
    expect(report.chains[0]!.addresses).toBeGreaterThan(0);
    const failing = report.chains[0]!.differences.filter((d) => d.failing).map((d) => d.address);
    const vs = await journalReconcilesWithChains(ctx);
    expect(vs.every((v) => v.invariant === JOURNAL)).toBe(true);
    expect(vs.map((v) => v.subject).sort()).toEqual([...failing].sort());
  });
});
