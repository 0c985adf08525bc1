import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepDelegateAddress } from '../../chains/evm/sweep-7702.js';
import { listSweeps, sweepCosts, sweepStepAttempts } from '../../src/ledger/treasury/sweeps.js';
import { planSweeps } from '../../src/treasury/planner.js';
import { advanceSweep, createSweeps, driveSweeps } from '../../src/treasury/runner.js';
import { backgroundMiner, transfersFrom } from '../support/chain-watch.js';
import { startFakeTicker, type FakeTicker } from '../support/fake-ticker.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';
import {
  ETH_PRICES,
  confirmedDeposits,
  depositAddressOf,
  gasStation,
  permissivePolicy,
  sweepDeps,
  tokenBalance,
  treasuryFor,
} from '../support/sweep-service.js';

// EIP-7702 sweeps driven by the service: `sweep run` (the CLI, a child process) on a Prague Anvil (the harness's
// default) plans `evm-7702-batch`, deploys the delegate once (the deploy step, group 0), then moves several deposit
// addresses' tokens in ONE type-4 transaction from the gas station. The ledger's swept amounts equal the chain. Then
// `sweep run` SIGKILLed at every outbound failpoint of the batch step and run again: one movement per address.
const run = promisify(execFile);
let h: ServiceHarness;
let ticker: FakeTicker;
let miner: { stop(): void } | undefined;
let station: string;

beforeAll(async () => {
  h = await startServiceHarness({ extraEnv: { ROLES: 'api,watcher' } });
  ticker = await startFakeTicker({ coinbaseRates: ETH_PRICES });
  station = await gasStation(h);
  await h.node.rpc('anvil_setBalance', [station, '0x56bc75e2d63100000']); // 100 ETH
  await permissivePolicy(h);
  miner = backgroundMiner(h.node, 150);
}, 120_000);
afterAll(async () => {
  miner?.stop();
  await ticker?.close();
  await h?.close();
});

const USDT = (n: number) => BigInt(n) * 1_000_000n;

async function sweepRun(
  merchantId: string,
  env: Record<string, string>,
): Promise<{ code: number | null; signal: string | null; out: string; err: string }> {
  try {
    const r = await run(
      'node',
      ['--import', 'tsx', 'src/cli/index.ts', 'sweep', 'run', '--merchant', merchantId, '--wait-seconds', '60', '--json'],
      {
        env: {
          ...process.env,
          ...h.env,
          LOG_LEVEL: 'silent',
          NATIVE_PRICE_SOURCES: 'coinbase',
          RATE_COINBASE_BASE_URL: ticker.url,
          PAYOUT_POLL_MS: '100',
          ...env,
        },
      },
    );
    return { code: 0, signal: null, out: r.stdout, err: r.stderr };
  } catch (e) {
    const x = e as { code: number | null; signal: string | null; stdout: string; stderr: string };
    return { code: x.code, signal: x.signal, out: x.stdout, err: x.stderr };
  }
}

/** A merchant with a treasury and one paid, final deposit per amount. */
async function fundedMerchant(name: string, amounts: string[]): Promise<{ shop: HarnessMerchant; deposits: string[]; treasury: string }> {
  const shop = await h.newMerchant(name);
  const treasury = Wallet.createRandom().address.toLowerCase();
  await treasuryFor(h, shop, treasury);
  const deposits: string[] = [];
  for (const amount of amounts) {
    const s = await h.paidSession(shop, { amount });
    await confirmedDeposits(h, s.id);
    deposits.push(await depositAddressOf(h, s.id));
  }
  return { shop, deposits, treasury };
}

async function stepId(sweepId: string, seq: number): Promise<string> {
  return (
    await h.t.db.selectFrom('sweep_steps').select('id').where('sweep_id', '=', sweepId).where('seq', '=', seq).executeTakeFirstOrThrow()
  ).id;
}

async function txType(hash: string): Promise<number> {
  const tx = await h.node.rpc<{ type: string }>('eth_getTransactionByHash', [hash]);
  return Number(tx.type);
}

describe('sweep run with evm-7702-batch', () => {
  it("deploys the merchant's delegate, then sweeps every deposit address in one type-4 transaction; the ledger equals the chain", async () => {
    const { shop, deposits, treasury } = await fundedMerchant('Batch', ['11.00', '12.00', '13.00', '14.00']);
    // The delegate is bound to the merchant's two destinations (docs/treasury-evm-7702.md): its own, not yet deployed.
    const delegate = sweepDelegateAddress(station, [shop.hotWallet, treasury]);
    expect(await h.node.rpc('eth_getCode', [delegate, 'latest'])).toBe('0x');
    const stationEthBefore = BigInt(await h.node.rpc<string>('eth_getBalance', [station, 'latest']));

    const r = await sweepRun(shop.id, {});
    expect(r.code, r.err).toBe(0);
    const report = JSON.parse(r.out);
    expect(report.created).toHaveLength(1);

    const [sweep] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 });
    expect(sweep).toMatchObject({ status: 'completed', method: 'evm-7702-batch', swept_base: USDT(50), planned_base: USDT(50) });
    expect(sweep!.steps.map((s) => [s.group_no, s.purpose, s.status])).toEqual([
      [0, 'deploy', 'succeeded'],
      [1, 'batch', 'succeeded'],
    ]);
    expect(await h.node.rpc('eth_getCode', [delegate, 'latest'])).not.toBe('0x');
    const batch = sweep!.steps.find((s) => s.purpose === 'batch')!;
    expect(await txType(batch.tx_hash!)).toBe(4);
    const batchTx = await h.node.rpc<{ from: string }>('eth_getTransactionByHash', [batch.tx_hash]);
    expect(batchTx.from.toLowerCase()).toBe(station.toLowerCase());

    // One movement per address, all in the batch transaction, and the ledger's per-source amount is the chain's.
    for (const [i, d] of deposits.entries()) {
      const moved = await transfersFrom(h.node, h.tokens.USDT.address, d);
      expect(moved).toEqual([{ to: treasury, amount: USDT(11 + i), tx: batch.tx_hash }]);
      expect(sweep!.sources.find((s) => s.address === d)).toMatchObject({
        state: 'swept',
        swept_base: USDT(11 + i),
        tx_hash: batch.tx_hash,
      });
      expect(await tokenBalance(h, 'USDT', d)).toBe(0n);
      // Deposit addresses never hold ETH: the gas station pays.
      expect(BigInt(await h.node.rpc<string>('eth_getBalance', [d, 'latest']))).toBe(0n);
    }
    expect(await tokenBalance(h, 'USDT', treasury)).toBe(USDT(50));
    // The fees the ledger recorded are what the gas station spent.
    const stationEthAfter = BigInt(await h.node.rpc<string>('eth_getBalance', [station, 'latest']));
    expect(sweep!.actual_fee).toBe(stationEthBefore - stationEthAfter);
    const costs = await sweepCosts(h.t.db, {
      since: new Date(Date.now() - 3_600_000),
      until: new Date(Date.now() + 60_000),
      merchantId: shop.id,
    });
    expect(costs[0]!.fee_base).toBe(sweep!.actual_fee);
    expect(costs[0]!.swept_base_by_token).toEqual({ USDT: String(USDT(50)) });

    // The merchant's delegate exists now, and its addresses are delegated: the next sweep is the batch alone, a type-2
    // transaction (no authorization to carry).
    for (const amount of ['5.00', '6.00']) await confirmedDeposits(h, (await h.paidSession(shop, { amount })).id);
    const r2 = await sweepRun(shop.id, {});
    expect(r2.code, r2.err).toBe(0);
    const [second] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 });
    expect(second!.status).toBe('completed');
    expect(second!.steps.map((s) => s.purpose)).toEqual(['batch']);
    expect(await tokenBalance(h, 'USDT', treasury)).toBe(USDT(61));
    // The merchant's treasury changes: its sweeps now go through the delegate of the new destinations, deployed first.
    const moved = Wallet.createRandom().address.toLowerCase();
    await treasuryFor(h, shop, moved);
    await confirmedDeposits(h, (await h.paidSession(shop, { amount: '20.00' })).id); // worth a deployment
    const r4 = await sweepRun(shop.id, {});
    expect(r4.code, r4.err).toBe(0);
    expect(JSON.parse(r4.out).created, r4.out).toHaveLength(1);
    const [fourth] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 });
    expect(fourth!.steps.map((s) => [s.purpose, s.status])).toEqual([
      ['deploy', 'succeeded'],
      ['batch', 'succeeded'],
    ]);
    const newDelegate = sweepDelegateAddress(station, [shop.hotWallet, moved]);
    const movedTx = await h.node.rpc<{ to: string }>('eth_getTransactionByHash', [fourth!.steps[1]!.tx_hash]);
    expect(movedTx.to.toLowerCase()).toBe(newDelegate);
    expect(await h.node.rpc('eth_getCode', [newDelegate, 'latest'])).not.toBe('0x');
    expect(await tokenBalance(h, 'USDT', moved)).toBe(USDT(20));
    expect(await tokenBalance(h, 'USDT', treasury)).toBe(USDT(61));
    // Another merchant gets a delegate of its own (bound to its destinations): deployed at its first sweep.
    const other = await fundedMerchant('Batch other', ['5.00']);
    const r3 = await sweepRun(other.shop.id, {});
    expect(r3.code, r3.err).toBe(0);
    const [third] = await listSweeps(h.t.db, { merchantId: other.shop.id, limit: 1 });
    expect(third!.steps.map((s) => [s.purpose, s.status])).toEqual([
      ['deploy', 'succeeded'],
      ['batch', 'succeeded'],
    ]);
    expect(await h.node.rpc('eth_getCode', [sweepDelegateAddress(station, [other.shop.hotWallet, other.treasury]), 'latest'])).not.toBe(
      '0x',
    );
    expect(await tokenBalance(h, 'USDT', other.treasury)).toBe(USDT(5));
  }, 300_000);

  it('two sweeps planned before the delegate exists: one deploys it, the other waits, then skips its deploy step; both complete', async () => {
    const { shop, deposits, treasury } = await fundedMerchant('Two batches', ['21.00', '22.00', '23.00']);
    await treasuryFor(h, shop, treasury, 2200n); // float 22.00: the 23 goes to the hot wallet, 21 and 22 to the treasury
    // One delegate for both destinations of the merchant: both sweeps plan its deployment.
    const delegate = sweepDelegateAddress(station, [shop.hotWallet, treasury]);
    expect(await h.node.rpc('eth_getCode', [delegate, 'latest'])).toBe('0x');
    const deps = sweepDeps(h, ticker);
    const plan = await planSweeps(deps.planner, { merchantId: shop.id });
    expect(plan.skipped).toEqual([]);
    expect(plan.batches.map((b) => [b.destinationKind, b.plan.method, b.plan.steps.map((s) => s.purpose)])).toEqual([
      ['hot_wallet', 'evm-7702-batch', ['deploy', 'batch']],
      ['treasury', 'evm-7702-batch', ['deploy', 'batch']],
    ]);
    const [a, b] = await createSweeps(h.t.db, plan.batches);
    // Blocks wait: the first sweep's deployment sits in the mempool while the second sweep is advanced.
    miner?.stop();
    await h.node.rpc('evm_setAutomine', [false]);
    try {
      await advanceSweep(deps.engine, a!.id);
      await advanceSweep(deps.engine, b!.id);
      const deployOf = async (id: string) =>
        (await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 })).find((x) => x.id === id)!.steps.find((x) => x.purpose === 'deploy')!;
      expect((await deployOf(a!.id)).status).toBe('processing');
      expect((await deployOf(b!.id)).status).toBe('pending'); // not a second deployment: it waits for the first
    } finally {
      await h.node.rpc('evm_setAutomine', [true]);
      miner = backgroundMiner(h.node, 150);
    }
    expect(await driveSweeps(deps.engine, { timeoutMs: 120_000 })).toBe(0);
    const sweeps = await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 });
    expect(sweeps.map((s) => s.status)).toEqual(['completed', 'completed']);
    const deploys = sweeps.flatMap((s) => s.steps.filter((st) => st.purpose === 'deploy').map((st) => st.status)).sort();
    expect(deploys).toEqual(['skipped', 'succeeded']); // deployed once
    expect(await h.node.rpc('eth_getCode', [delegate, 'latest'])).not.toBe('0x');
    expect(await tokenBalance(h, 'USDT', shop.hotWallet)).toBe(USDT(23));
    expect(await tokenBalance(h, 'USDT', treasury)).toBe(USDT(43));
    for (const d of deposits) expect(await transfersFrom(h.node, h.tokens.USDT.address, d)).toHaveLength(1);
  }, 300_000);
});

describe('deployments of different merchants', () => {
  it("two merchants' first sweeps deploy their own delegates side by side: neither waits for the other", async () => {
    const one = await fundedMerchant('Deploy one', ['31.00']);
    const two = await fundedMerchant('Deploy two', ['32.00']);
    const deps = sweepDeps(h, ticker);
    const batches = [
      ...(await planSweeps(deps.planner, { merchantId: one.shop.id })).batches,
      ...(await planSweeps(deps.planner, { merchantId: two.shop.id })).batches,
    ];
    expect(batches.map((b) => b.plan.steps.map((s) => s.purpose))).toEqual([
      ['deploy', 'batch'],
      ['deploy', 'batch'],
    ]);
    const [a, b] = await createSweeps(h.t.db, batches);
    miner?.stop();
    await h.node.rpc('evm_setAutomine', [false]);
    try {
      await advanceSweep(deps.engine, a!.id);
      await advanceSweep(deps.engine, b!.id);
      const deploys = (await listSweeps(h.t.db, { limit: 10 }))
        .filter((x) => x.id === a!.id || x.id === b!.id)
        .map((x) => x.steps.find((st) => st.purpose === 'deploy')!.status);
      expect(deploys).toEqual(['processing', 'processing']); // both sent: different contracts
    } finally {
      await h.node.rpc('evm_setAutomine', [true]);
      miner = backgroundMiner(h.node, 150);
    }
    expect(await driveSweeps(deps.engine, { timeoutMs: 120_000 })).toBe(0);
    for (const m of [one, two]) {
      const [done] = await listSweeps(h.t.db, { merchantId: m.shop.id, limit: 1 });
      expect(done!.steps.map((st) => [st.purpose, st.status])).toEqual([
        ['deploy', 'succeeded'],
        ['batch', 'succeeded'],
      ]);
      expect(await h.node.rpc('eth_getCode', [sweepDelegateAddress(station, [m.shop.hotWallet, m.treasury]), 'latest'])).not.toBe('0x');
    }
    expect(await tokenBalance(h, 'USDT', one.treasury)).toBe(USDT(31));
    expect(await tokenBalance(h, 'USDT', two.treasury)).toBe(USDT(32));
  }, 300_000);
});

const FAILPOINTS = ['outbound:after_sign', 'outbound:after_broadcast', 'outbound:after_receipt'] as const;

describe('sweep run SIGKILLed at the batch step', () => {
  it.each(FAILPOINTS)(
    'at %s: a second run resumes; one movement per address, the ledger equals the chain',
    async (failpoint) => {
      const { shop, deposits, treasury } = await fundedMerchant(`Crash batch ${failpoint}`, ['7.00', '8.00', '9.00']);
      const doomed = await sweepRun(shop.id, { SP_FAILPOINTS: failpoint, SP_FAILPOINTS_SWEEP_STEP: 'batch' });
      expect(doomed.signal, doomed.err).toBe('SIGKILL');
      const [sweep] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 });
      expect(sweep!.status).toBe('running');
      const killed = sweep!.steps.find((s) => s.purpose === 'batch')!;
      const attempts = await sweepStepAttempts(h.t.db, await stepId(sweep!.id, killed.seq));
      expect(attempts).toHaveLength(1);
      if (failpoint === 'outbound:after_sign') {
        expect(attempts[0]!.state).toBe('signed');
        expect(await h.node.rpc('eth_getTransactionReceipt', [attempts[0]!.tx_hash])).toBeNull(); // never broadcast
      }

      const survivor = await sweepRun(shop.id, {});
      expect(survivor.code, survivor.err).toBe(0);
      const report = JSON.parse(survivor.out);
      expect(report.created).toEqual([]); // the addresses were in the running sweep: nothing planned twice
      expect(report.resumed.find((s: { id: string }) => s.id === sweep!.id)?.status).toBe('completed');

      const [done] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 });
      expect(done!.status).toBe('completed');
      expect(done!.swept_base).toBe(USDT(24));
      for (const [i, d] of deposits.entries()) {
        const moved = await transfersFrom(h.node, h.tokens.USDT.address, d);
        expect(moved).toEqual([{ to: treasury, amount: USDT(7 + i), tx: attempts[0]!.tx_hash }]);
        expect(done!.sources.find((s) => s.address === d)).toMatchObject({ state: 'swept', swept_base: USDT(7 + i) });
      }
      expect(await tokenBalance(h, 'USDT', treasury)).toBe(USDT(24));
      // The killed step was never signed again: its one attempt is the one that landed.
      const after = await sweepStepAttempts(h.t.db, await stepId(done!.id, killed.seq));
      expect(after.map((a) => [a.tx_hash, a.state])).toEqual([[attempts[0]!.tx_hash, 'confirmed']]);
    },
    240_000,
  );
});
