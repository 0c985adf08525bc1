import { tronSweepSetup } from '../support/sweep-setup.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRX } from '../../scripts/devnet/fake-java-tron/chain.js';
import { isSweeper } from '../../chains/types.js';
import { listSweeps } from '../../src/ledger/treasury/sweeps.js';
import { setTreasuryDestination } from '../../src/ledger/treasury/destinations.js';
import { evmHexToTron, normalizeTronAddress } from '../../chains/tron/address.js';
import { expectBurntFeeOnce, journalBalance } from '../support/failed-fee.js';
import type { FakeTicker } from '../support/fake-ticker.js';
import { reconcileOnceCovering } from '../support/reconcile-covering.js';
import { sweepRunCli } from '../support/sweep-cli.js';
import { startTronServiceHarness, type TronServiceHarness } from '../support/tron-service-harness.js';

// The fee of a failed TRON sweep step is burnt and journaled (docs/journal.md "Failed transactions", "Sweeps"): on the
// TRX top-up path (no staked energy: the gas station funds the deposit address, which then burns TRX for its token
// transfer), the transfer runs OUT_OF_ENERGY on the fake java-tron and is mined with a failed receipt that burns the
// deposit address's TRX. `sweep run` (the CLI, a child process) journals that fee and is killed there (SIGKILL at
// outbound:after_burnt_fee, limited to the transfer step); the next run resumes the sweep, fails it, and the fee stays
// journaled once, on the sweep. Reconcile then reads the deposit address's and the gas station's TRX, and the
// deposit's USDT, exactly as the journal says.
let h: TronServiceHarness;
let ticker: FakeTicker;
let gasStation: string;

beforeAll(async () => {
  h = await startTronServiceHarness({ extraEnv: { ROLES: 'api,watcher' } });
  // Nothing staked for energy: the sweep takes the TRX top-up path.
  ({ ticker, station: gasStation } = await tronSweepSetup(h, { stationSun: 10_000n * TRX }));
}, 180_000);
afterAll(async () => {
  await ticker?.close();
  await h?.close();
});

const sweepRun = (merchantId: string, env: Record<string, string> = {}) =>
  sweepRunCli(h.env, ticker.url, merchantId, { PAYOUT_POLL_MS: '100', ...env });

describe('fees of failed TRON sweep steps', () => {
  it('a transfer that runs OUT_OF_ENERGY: the fee is journaled once on the sweep across a SIGKILL, the sweep fails, TRX reconciles', async () => {
    const shop = await h.newMerchant('Sweep burnt fee');
    const treasury = evmHexToTron('0x00000000000000000000000000000000000d0b01');
    await setTreasuryDestination(h.t.db, { merchantId: shop.id, network: 'tron', mode: 'test', treasuryAddress: treasury, actor: 'test' });
    const s = await h.paidSession(shop, { amount: '9.00' });
    const deposit = normalizeTronAddress(s.depositAddress)!; // canonical (41…), as the journal names it
    await h.until(async () => {
      const rows = await h.t.db.selectFrom('deposits').select('status').where('session_id', '=', s.id).execute();
      return rows.length > 0 && rows.every((r) => r.status === 'confirmed') ? true : undefined;
    }, 60_000);
    // The planner reads balances at the solidified height: wait until the payment is final there too.
    const tron = h.service.adapters.require('tron', 'test');
    if (!isSweeper(tron)) throw new Error('the TRON adapter is not a Sweeper');
    await h.until(async () => ((await tron.finalTokenBalances('USDT', [s.depositAddress]))[0]! > 0n ? true : undefined), 60_000);

    h.fake.forceNextResult('OUT_OF_ENERGY'); // the next TriggerSmartContract: the sweep's token transfer
    const doomed = await sweepRun(shop.id, { SP_FAILPOINTS: 'outbound:after_burnt_fee', SP_FAILPOINTS_SWEEP_STEP: 'transfer' });
    expect(doomed.signal, doomed.err).toBe('SIGKILL');

    // Killed after journaling the fee, before failing the step.
    const [sweep] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 });
    expect(sweep).toMatchObject({ status: 'running', method: 'tron-trx-topup' });
    expect(Object.fromEntries(sweep!.steps.map((x) => [x.purpose, x.status]))).toEqual({ fund: 'succeeded', transfer: 'processing' });
    const transferStep = sweep!.steps.find((x) => x.purpose === 'transfer')!;
    const [attempt] = await h.t.db
      .selectFrom('sweep_step_attempts')
      .select(['tx_hash', 'sender'])
      .where('step_id', '=', transferStep.id)
      .execute();
    const mined = h.fake.chain.txs.get(attempt!.tx_hash)!;
    expect(mined.raw?.owner).toBe(deposit); // the deposit address sends its own transfer and burns its own TRX
    expect(mined.contractRet).toBe('OUT_OF_ENERGY');
    expect(mined.info.result).toBe('FAILED');
    const fee = BigInt(mined.info.fee as number);
    const receipt = mined.info.receipt as { energy_fee?: number; net_fee?: number };
    expect(fee).toBe(BigInt(receipt.energy_fee ?? 0) + BigInt(receipt.net_fee ?? 0));
    expect(fee).toBeGreaterThan(0n);
    const burnt = {
      kind: 'sweep',
      object: { type: 'sweep', id: sweep!.id },
      network: 'tron',
      txHash: attempt!.tx_hash,
      merchantId: shop.id,
      blockHeight: mined.blockNumber,
      sender: deposit,
      fee,
    } as const;
    await expectBurntFeeOnce(h.t.db, burnt);

    // The next run resumes the sweep and fails it; the address is released, nothing moved, the fee journaled once.
    const again = await sweepRun(shop.id);
    expect(again.code, again.err).not.toBe(0);
    expect(again.signal).toBeNull();
    const [failed] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 });
    expect(failed!.id).toBe(sweep!.id);
    expect(failed!.status).toBe('failed');
    expect(failed!.steps.find((x) => x.purpose === 'transfer')).toMatchObject({
      status: 'failed',
      failure_reason: expect.stringMatching(/out_of_energy/i),
    });
    expect(failed!.sources[0]).toMatchObject({ state: 'failed', swept_base: null });
    expect(await h.transfers('USDT', deposit, treasury)).toEqual([]);
    await expectBurntFeeOnce(h.t.db, burnt);

    // Reconcile: nothing differs, nothing unexplained; the deposit address's TRX (funded, minus the fee burnt) and
    // USDT (the payment, still there), and the gas station's TRX are the journal's to the sun.
    const report = await reconcileOnceCovering(h.t.db, h.adapter, mined.blockNumber, h.until);
    expect(report.differences).toEqual([]);
    expect(report.unexplainedNative).toEqual([]);
    const account = (a: string) => `address:tron:test:${a}`;
    expect(await journalBalance(h.t.db, account(deposit), 'tron:test:native')).toBe(h.fake.chain.account(deposit)!.balanceSun);
    expect(await journalBalance(h.t.db, account(deposit), 'tron:test:USDT')).toBe(9_000_000n);
    expect(await journalBalance(h.t.db, account(gasStation), 'tron:test:native')).toBe(h.fake.chain.account(gasStation)!.balanceSun);
  }, 360_000);
});
