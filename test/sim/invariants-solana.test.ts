import { randomBytes } from 'node:crypto';
import { solanaSimContext } from '../support/sim-invariant-harness.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base58Encode } from '../../chains/solana/base58.js';
import type { Transaction } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import type { InvariantContext } from '../../scripts/sim/contract.js';
import { SESSION_PAID, sessionPaidIffChain } from '../../scripts/sim/invariants/session-paid.js';
import { SINGLE_CREDIT, noTransferCreditedTwice } from '../../scripts/sim/invariants/single-credit.js';
import { OUTBOUND_ONCE, outboundMovedMoneyAtMostOnce } from '../../scripts/sim/invariants/outbound-once.js';
import type { ChainHarnessMerchant } from '../support/chain-service-harness.js';
import { startSolanaServiceHarness, type SolanaServiceHarness } from '../support/solana-service-harness.js';
import { ChainRegistry } from '../../chains/chain-registry.js';
import { reconcile } from '../../src/reconcile/reconcile.js';
import { JOURNAL, journalReconcilesWithChains } from '../../scripts/sim/invariants/journal.js';
import { DEPOSITS_RECORDED, depositsRecordedBelowCursor } from '../../scripts/sim/invariants/deposits-recorded.js';
import { otherChainAdapters } from '../../scripts/sim/invariants/other-adapters.js';

// The chain-reading invariants on Solana (scripts/sim/invariants/solana-chain.ts): the whole service on the LiteSVM
// endpoint, a session paid by a real transfer, a refund paid out by the outbound engine. They hold on that state, and
// each corruption (inside a rolled-back transaction) is reported with its subject.

let h: SolanaServiceHarness;
let shop: ChainHarnessMerchant;
let paid: { id: string; payer: string; depositOwner: string; paymentTx: string };
let refundId: string;

const context = (db: InvariantContext['db']): InvariantContext =>
  solanaSimContext(db, { rpcUrl: h.rpc.url, mints: h.mints, redisPrefix: h.env.REDIS_KEY_PREFIX! });

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
  h = await startSolanaServiceHarness();
  shop = await h.newMerchant('Sol sim');
  h.fundHotWallet(shop);
  paid = await h.paidSession(shop, { amount: '4.00', token: 'USDC' });
  const created = await h.createRefund(shop, { session_id: paid.id, amount: 150, currency: 'USDC' });
  expect(created.status).toBe(201);
  const done = await h.settled(shop, created.json.refund_id, 90_000);
  expect(done.status).toBe('completed');
  refundId = done.id as string;
}, 240_000);
afterAll(async () => {
  await h?.close();
});

describe('simulator invariants on Solana', () => {
  it('hold on a real paid session and a completed refund', async () => {
    const ctx = context(h.t.db);
    expect(await sessionPaidIffChain(ctx)).toEqual([]);
    expect(await noTransferCreditedTwice(ctx)).toEqual([]);
    expect(await outboundMovedMoneyAtMostOnce(ctx)).toEqual([]);
  });

  it('report a paid session set back to open, a credit of a signature that never landed, a completed refund said failed', async () => {
    const dep = await h.t.db.selectFrom('deposits').selectAll().where('session_id', '=', paid.id).executeTakeFirstOrThrow();
    const ghost = base58Encode(randomBytes(64));
    const vs = await corrupted(async (trx) => {
      await trx.updateTable('payment_sessions').set({ status: 'open' }).where('id', '=', paid.id).execute();
      await trx
        .insertInto('deposits')
        .values({ ...dep, id: `dep_${randomBytes(6).toString('hex')}`, tx_hash: ghost })
        .execute();
      await trx.updateTable('refunds').set({ status: 'failed' }).where('id', '=', refundId).execute();
      const ctx = context(trx);
      return [...(await sessionPaidIffChain(ctx)), ...(await noTransferCreditedTwice(ctx)), ...(await outboundMovedMoneyAtMostOnce(ctx))];
    });
    expect(vs.filter((v) => v.invariant === SESSION_PAID).map((v) => v.subject)).toEqual([paid.id]);
    expect(vs.find((v) => v.invariant === SESSION_PAID)!.message).toMatch(/is open but the canonical chain holds 4000000 of 4000000/);
    expect(vs.filter((v) => v.invariant === SINGLE_CREDIT).map((v) => v.subject)).toEqual(
      expect.arrayContaining([`solana/test/${ghost}:${dep.log_index}`, paid.id]),
    );
    expect(vs.filter((v) => v.invariant === OUTBOUND_ONCE).map((v) => v.subject)).toEqual([refundId]);
    expect(vs.find((v) => v.invariant === OUTBOUND_ONCE)!.message).toMatch(/is failed but its transaction .* moved money/);
  });

  it('outbound at most once: a token debit of the hot wallet that no attempt records is reported, with its amount', async () => {
    const attempt = await h.t.db.selectFrom('payout_attempts').selectAll().where('refund_id', '=', refundId).executeTakeFirstOrThrow();
    const landed = attempt.tx_hash;
    // The refund's real, landed transfer loses its record: its attempt names another signature, the refund none.
    const vs = await corrupted(async (trx) => {
      await trx
        .updateTable('payout_attempts')
        .set({ tx_hash: base58Encode(randomBytes(64)) })
        .where('id', '=', attempt.id)
        .execute();
      await trx.updateTable('refunds').set({ transaction_hash: null }).where('id', '=', refundId).execute();
      return outboundMovedMoneyAtMostOnce(context(trx));
    });
    expect(vs.every((v) => v.invariant === OUTBOUND_ONCE)).toBe(true);
    expect(vs.map((v) => v.subject).sort()).toEqual([landed, refundId].sort());
    const unrecorded = vs.find((v) => v.subject === landed)!;
    // 1.50 USDC (6 decimals) left the hot wallet the attempt was sent from.
    expect(unrecorded.message).toBe(
      `1500000 USDC left hot wallet ${attempt.sender} in ${landed} (solana), a transaction no refund, charge or sweep recorded`,
    );
    expect(await outboundMovedMoneyAtMostOnce(context(h.t.db))).toEqual([]);
  });

  it('deposits recorded below the cursor: a landed payment the cursor passed with no live deposit row is reported; above the tip it is not judged', async () => {
    const dep = await h.t.db
      .selectFrom('deposits')
      .select(['id', 'tx_hash', 'log_index', 'block_number'])
      .where('session_id', '=', paid.id)
      .executeTakeFirstOrThrow();
    expect(dep.tx_hash).toBe(paid.paymentTx);
    expect(await depositsRecordedBelowCursor(context(h.t.db))).toEqual([]);
    // The row orphaned, and the row keyed by another account index: both are a deposit the cursor passed.
    for (const change of [{ status: 'orphaned' as const, disposition: null }, { log_index: dep.log_index + 7 }]) {
      const vs = await corrupted(async (trx) => {
        await trx.updateTable('deposits').set(change).where('id', '=', dep.id).execute();
        return depositsRecordedBelowCursor(context(trx));
      });
      expect(vs.map((v) => `${v.invariant} ${v.subject}`)).toEqual([`${DEPOSITS_RECORDED} ${paid.id}`]);
      const prefix =
        `4000000 USDC to ${paid.depositOwner} (session ${paid.id}) in ${paid.paymentTx} at slot ${dep.block_number} is not recorded ` +
        "as a deposit, but the solana:test watcher's committed cursor is past it (tip ";
      expect(vs[0]!.message.startsWith(prefix)).toBe(true);
      expect(BigInt(vs[0]!.message.slice(prefix.length, -1))).toBeGreaterThanOrEqual(dep.block_number);
    }
    // A cursor below the payment's slot: the watcher has not reached it, nothing to judge.
    const below = await corrupted(async (trx) => {
      await trx.updateTable('deposits').set({ status: 'orphaned', disposition: null }).where('id', '=', dep.id).execute();
      await trx
        .updateTable('chain_cursors')
        .set({ tip_height: dep.block_number - 1n })
        .where('chain_key', '=', 'solana:test')
        .execute();
      return depositsRecordedBelowCursor(context(trx));
    });
    expect(below).toEqual([]);
  });

  it("the journal invariant reconciles solana through the service's adapter on the chain's own URL, naming each failing difference", async () => {
    const ctx = context(h.t.db);
    const report = await reconcile({ db: h.t.db, adapters: new ChainRegistry(await otherChainAdapters(ctx.chains)) });
    expect(report.chains.map((c) => `${c.network}/${c.mode}`)).toEqual(['solana/test']);
    expect(report.chains[0]!.skipped).toBeUndefined();
    expect(report.chains[0]!.addresses).toBeGreaterThan(0);
    const failing = report.chains[0]!.differences.filter((d) => d.failing).map((d) => d.address);
    const vs = await journalReconcilesWithChains(ctx);
    expect(vs.every((v) => v.invariant === JOURNAL)).toBe(true);
    expect(vs.map((v) => v.subject).sort()).toEqual([...failing].sort());
  });
});
