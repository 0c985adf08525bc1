import { randomBytes } from 'node:crypto';
import { tronSweepSetup } from '../support/sweep-setup.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRX } from '../../scripts/devnet/fake-java-tron/chain.js';
import { evmHexToTron } from '../../chains/tron/address.js';
import { isSweeper } from '../../chains/types.js';
import type { InvariantContext } from '../../scripts/sim/contract.js';
import { tronSucceeded } from '../../scripts/sim/invariants/tron-chain.js';
import { outboundMovedMoneyAtMostOnce } from '../../scripts/sim/invariants/outbound-once.js';
import { listSweeps } from '../../src/ledger/treasury/sweeps.js';
import { setTreasuryDestination } from '../../src/ledger/treasury/destinations.js';
import type { FakeTicker } from '../support/fake-ticker.js';
import { rolledBack, tronHarnessContext } from '../support/sim-invariant-harness.js';
import { sweepRunCli } from '../support/sweep-cli.js';
import { expectSweepStepJudged } from '../support/sweep-step-judging.js';
import { startTronServiceHarness, type TronServiceHarness } from '../support/tron-service-harness.js';

// The simulator's outbound invariant on TRON sweep steps (scripts/sim/invariants/outbound-once.ts): a real sweep by
// the TRX top-up (a `fund` step, a TRX TransferContract that java-tron's JSON-RPC shows no receipt for, then the
// deposit address's TRC-20 `transfer`) is judged through the solidified wallet API (`tronSucceeded`), each step
// reported with its subject when the records are corrupted.

let h: TronServiceHarness;
let ticker: FakeTicker;

const context = (db: InvariantContext['db']): InvariantContext => tronHarnessContext(h)(db);

beforeAll(async () => {
  h = await startTronServiceHarness({ extraEnv: { ROLES: 'api,watcher' } });
  ({ ticker } = await tronSweepSetup(h, { stationSun: 10_000n * TRX })); // nothing staked: the TRX top-up
}, 180_000);
afterAll(async () => {
  await ticker?.close();
  await h?.close();
});

describe('sweep steps on TRON (simulator outbound invariant)', () => {
  it('a TRX fund step and a TRC-20 transfer step: hold on the real sweep, each corruption reported', async () => {
    const shop = await h.newMerchant('Sim sweep tron');
    const treasury = evmHexToTron('0x00000000000000000000000000000000000d5e01');
    await setTreasuryDestination(h.t.db, { merchantId: shop.id, network: 'tron', mode: 'test', treasuryAddress: treasury, actor: 'test' });
    const s = await h.paidSession(shop, { amount: '6.00' });
    await h.until(async () => {
      const rows = await h.t.db.selectFrom('deposits').select('status').where('session_id', '=', s.id).execute();
      return rows.length > 0 && rows.every((r) => r.status === 'confirmed') ? true : undefined;
    }, 60_000);
    // The planner reads balances at the solidified height: each run plans once, so run until one sweep completes.
    const sweep = await h.until(async () => {
      const r = await sweepRunCli(h.env, ticker.url, shop.id, { PAYOUT_POLL_MS: '100' });
      expect(r.signal, r.err).toBeNull();
      const [x] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 });
      return x?.status === 'completed' ? x : undefined;
    }, 120_000);
    expect(sweep.method).toBe('tron-trx-topup');
    const step = (purpose: string) => sweep.steps.find((x) => x.purpose === purpose)!;
    const [fund, transfer] = [step('fund'), step('transfer')];
    expect([fund.status, transfer.status]).toEqual(['succeeded', 'succeeded']);
    // Both landed as java-tron's solidified wallet API says; an unknown txID did not.
    await h.until(async () => ((await tronSucceeded(h.fake.url, transfer.tx_hash!)) ? true : undefined), 30_000);
    expect(await tronSucceeded(h.fake.url, fund.tx_hash!)).toBe(true);
    const unknownHash = randomBytes(32).toString('hex');
    expect(await tronSucceeded(h.fake.url, unknownHash)).toBe(false);

    const ids = { sweepId: sweep.id, unknownHash };
    await expectSweepStepJudged(h.t.db, context, { ...ids, stepId: fund.id, landedElsewhere: transfer.tx_hash! });
    await expectSweepStepJudged(h.t.db, context, { ...ids, stepId: transfer.id, landedElsewhere: fund.tx_hash! });
  }, 240_000);

  it('a transfer step that ran OUT_OF_ENERGY (failed) is judged to have moved nothing; said succeeded, it is reported', async () => {
    const shop = await h.newMerchant('Sim sweep tron failed');
    const s = await h.paidSession(shop, { amount: '4.00' });
    const tron = h.service.adapters.require('tron', 'test');
    if (!isSweeper(tron)) throw new Error('not a Sweeper');
    await h.until(async () => ((await tron.finalTokenBalances('USDT', [s.depositAddress]))[0]! > 0n ? true : undefined), 60_000);
    h.fake.forceNextResult('OUT_OF_ENERGY'); // the sweep's token transfer
    const r = await sweepRunCli(h.env, ticker.url, shop.id, { PAYOUT_POLL_MS: '100' });
    expect(r.signal, r.err).toBeNull();
    const [sweep] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 });
    const transfer = sweep!.steps.find((x) => x.purpose === 'transfer')!;
    expect(transfer).toMatchObject({ status: 'failed', failure_reason: expect.stringMatching(/out_of_energy/i) });
    const [attempt] = await h.t.db.selectFrom('sweep_step_attempts').select('tx_hash').where('step_id', '=', transfer.id).execute();
    expect(h.fake.chain.txs.get(attempt!.tx_hash)?.contractRet).toBe('OUT_OF_ENERGY');
    // Solidified (the wallet API answers `{}` before), found, and not a success.
    await h.until(async () => {
      const res = await fetch(`${h.fake.url}/walletsolidity/gettransactionbyid`, {
        method: 'POST',
        body: JSON.stringify({ value: attempt!.tx_hash }),
      });
      return ((await res.json()) as { txID?: string }).txID ? true : undefined;
    }, 30_000);
    expect(await tronSucceeded(h.fake.url, attempt!.tx_hash)).toBe(false);
    const subject = `sweep:${sweep!.id}/${transfer.id}`;
    const of = (vs: Awaited<ReturnType<typeof outboundMovedMoneyAtMostOnce>>) =>
      vs.filter((v) => v.subject === subject).map((v) => v.message);
    expect(of(await outboundMovedMoneyAtMostOnce(context(h.t.db)))).toEqual([]);
    const saidSucceeded = await rolledBack(h.t.db, async (trx) => {
      await trx.updateTable('sweep_steps').set({ status: 'succeeded' }).where('id', '=', transfer.id).execute();
      return of(await outboundMovedMoneyAtMostOnce(context(trx)));
    });
    expect(saidSucceeded).toEqual([expect.stringMatching(/succeeded but none of its transactions is on the canonical chain/)]);
  }, 180_000);
});
