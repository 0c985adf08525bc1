import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InvariantContext } from '../../scripts/sim/contract.js';
import { CHARGES, renewalPeriodChargedOnce } from '../../scripts/sim/invariants/charges.js';
import { OUTBOUND_ONCE, outboundMovedMoneyAtMostOnce } from '../../scripts/sim/invariants/outbound-once.js';
import { SINGLE_CREDIT, noTransferCreditedTwice } from '../../scripts/sim/invariants/single-credit.js';
import { rolledBack, solanaSimContext } from '../support/sim-invariant-harness.js';
import { plan } from '../integration/subscriptions-fixture.js';
import { startSolanaSubsFixture, type SolanaSubsFixture } from '../integration/subscriptions-solana-fixture.js';

// The simulator's charge invariants on Solana (scripts/sim/invariants/charges.ts, outbound-once.ts; solana-chain.ts
// `solanaCreditingSignatures`), over REAL charges: a subscription authorized by the customer's SPL Token
// ApproveChecked on the LiteSVM endpoint (scripts/devnet/solana-rpc), its first period and a renewal pulled by the
// merchant's charger as delegate (TransferChecked into the settlement wallet's ATA), read back at `finalized`. Both
// invariants hold on it; each corruption (inside a rolled-back transaction) is reported: a charge marked failed
// although its transaction moved the money, a succeeded charge whose only transaction moved nothing to the
// settlement wallet (the customer's approve), and one charge holding two landed transfers.

let f: SolanaSubsFixture;
let approveSig: string;

const context = (db: InvariantContext['db']): InvariantContext =>
  solanaSimContext(db, { rpcUrl: f.rpc.url, mints: f.mints, redisPrefix: 'sp_unused' });

/** The invariants' findings about money on chain, leaving out webhook deliveries (this fixture has no receiver). */
const moneyFindings = (vs: Array<{ invariant: string; message: string }>) =>
  vs.filter((v) => (v.invariant === CHARGES || v.invariant === OUTBOUND_ONCE) && !v.message.includes('never reached the receiver'));

const findings = async (db: InvariantContext['db']) => ({
  charges: moneyFindings(await renewalPeriodChargedOnce(context(db))).map((v) => v.message),
  once: moneyFindings(await outboundMovedMoneyAtMostOnce(context(db), { scanHotWallets: false })).map((v) => v.message),
});

const chargesInOrder = (db: InvariantContext['db']) =>
  db.selectFrom('subscription_charges').select(['id', 'state', 'network', 'tx_hash']).orderBy('id').execute();

beforeAll(async () => {
  f = await startSolanaSubsFixture({ start: new Date('2027-01-31T10:00:00Z') });
  const customer = f.customer(50_000_000n);
  const owner = customer.publicKey.toBase58();
  const sub = await f.create({ ...plan({ unit_amount: 700 }, 1), customer: 'cus_sim_solana' });
  const info = await f.select(sub.id, owner);
  approveSig = (await f.approve(customer, info.spender, BigInt(info.allowance_base))).signature;
  await f.settle();
  // The renewal: the clock passes the period end.
  const s = (await f.client.get(`/api/v1/subscriptions/${sub.id}`)).json;
  f.clock.set(new Date(s.current_period_end * 1000 + 1000));
  await f.settle();
}, 180_000);
afterAll(async () => f?.close());

describe('charge invariants on Solana (simulator)', () => {
  it('hold on real Solana charges: one TransferChecked into the settlement wallet per period', async () => {
    const charges = await chargesInOrder(f.h.t.db);
    expect(charges).toEqual([
      expect.objectContaining({ state: 'succeeded', network: 'solana' }),
      expect.objectContaining({ state: 'succeeded', network: 'solana' }),
    ]);
    // Base58 signatures, case kept: the invariants must not lowercase them.
    expect(charges.every((c) => c.tx_hash !== null && c.tx_hash !== c.tx_hash.toLowerCase())).toBe(true);
    const invoices = await f.h.t.db.selectFrom('invoices').select(['status', 'amount_paid_minor']).orderBy('period_number').execute();
    expect(invoices.map((i) => [i.status, i.amount_paid_minor])).toEqual([
      ['paid', 700n],
      ['paid', 700n],
    ]);
    expect(await findings(f.h.t.db)).toEqual({ charges: [], once: [] });
    // Each charge's deposit names its transfer as the chain reader does (the credited account's index): before, the
    // charge named the instruction's index, and single-credit found no such transfer (seed 2, --networks solana).
    expect((await noTransferCreditedTwice(context(f.h.t.db))).filter((v) => v.invariant === SINGLE_CREDIT)).toEqual([]);
  });

  it('report a Solana charge marked failed whose transaction moved the money', async () => {
    const r = await rolledBack(f.h.t.db, async (trx) => {
      const [first] = await chargesInOrder(trx);
      await trx.updateTable('subscription_charges').set({ state: 'failed' }).where('id', '=', first!.id).execute();
      return findings(trx);
    });
    expect(r.charges.some((m) => m.includes('is paid with 0 succeeded charges'))).toBe(true);
    expect(r.charges.some((m) => m.includes('no charge of it moved money'))).toBe(false);
    expect(r.once).toEqual([expect.stringMatching(/^charge \S+ failed but its transaction \S+ moved money/)]);
  });

  it('report a succeeded Solana charge none of whose transactions credited the settlement wallet', async () => {
    const r = await rolledBack(f.h.t.db, async (trx) => {
      const [first] = await chargesInOrder(trx);
      // The customer's approve landed and succeeded, but moved nothing: it is no charge.
      await trx.updateTable('subscription_charges').set({ tx_hash: approveSig }).where('id', '=', first!.id).execute();
      await trx.updateTable('subscription_charge_attempts').set({ tx_hash: approveSig }).where('charge_id', '=', first!.id).execute();
      return findings(trx);
    });
    expect(r.charges).toEqual([expect.stringMatching(/is paid but no charge of it moved money on the canonical chain$/)]);
    expect(r.once).toEqual([expect.stringMatching(/^charge \S+ succeeded but none of its transactions moved money/)]);
  });

  it('report one Solana charge holding two landed transfers (the period charged twice)', async () => {
    const r = await rolledBack(f.h.t.db, async (trx) => {
      const [first, second] = await chargesInOrder(trx);
      // The renewal's transfer listed as another attempt of the first charge, and the renewal made a charge of that
      // same first invoice.
      await trx.updateTable('subscription_charge_attempts').set({ charge_id: first!.id }).where('charge_id', '=', second!.id).execute();
      const { invoice_id } = await trx
        .selectFrom('subscription_charges')
        .select('invoice_id')
        .where('id', '=', first!.id)
        .executeTakeFirstOrThrow();
      await trx.updateTable('subscription_charges').set({ invoice_id, state: 'failed' }).where('id', '=', second!.id).execute();
      return findings(trx);
    });
    expect(r.once).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^charge \S+ \(succeeded\) moved money 2 times: \S+, \S+$/),
        expect.stringMatching(/^charge \S+ failed but its transaction \S+ moved money/),
      ]),
    );
    expect(r.charges.some((m) => /was charged 2 times on chain/.test(m))).toBe(true);
  });
});
