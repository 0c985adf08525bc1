import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listSweeps, sweepStepAttempts } from '../../src/ledger/treasury/sweeps.js';
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

// Faults during a sweep (evm-gas-topup on Anvil): `sweep run` SIGKILLed at every outbound failpoint of the top-up
// (fund) step and of the transfer step, then run again; and a reorg that removes a transfer before it is final.
// Whatever happens: exactly one on-chain movement per address, and the swept amounts in the ledger equal the chain.
const run = promisify(execFile);
let h: ServiceHarness;
let ticker: FakeTicker;
let miner: { stop(): void } | undefined;
let deps: ReturnType<typeof sweepDeps>;
let station: string;

beforeAll(async () => {
  h = await startServiceHarness({
    // A chain without EIP-7702 (pre-Prague): the sweeps here take the gas top-up path.
    anvilArgs: ['--hardfork', 'cancun'],
    extraEnv: { ROLES: 'api,watcher' },
  });
  ticker = await startFakeTicker({ coinbaseRates: ETH_PRICES });
  deps = sweepDeps(h, ticker);
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

/** A merchant with one paid, final 7 USDT deposit and a treasury. */
async function fundedMerchant(name: string): Promise<{ shop: HarnessMerchant; deposit: string; treasury: string }> {
  const shop = await h.newMerchant(name);
  const treasury = Wallet.createRandom().address.toLowerCase();
  await treasuryFor(h, shop, treasury);
  const s = await h.paidSession(shop, { amount: '7.00' });
  await confirmedDeposits(h, s.id);
  return { shop, deposit: await depositAddressOf(h, s.id), treasury };
}

/** Receipts of every attempt of every step: at most one attempt of a step ever landed. */
async function landedPerStep(sweepId: string): Promise<Record<string, number>> {
  const [sweep] = (await listSweeps(h.t.db, { limit: 1000 })).filter((s) => s.id === sweepId);
  const out: Record<string, number> = {};
  for (const st of sweep!.steps) {
    let landed = 0;
    for (const a of await sweepStepAttempts(h.t.db, (await stepId(sweepId, st.seq))!)) {
      if (await h.node.rpc('eth_getTransactionReceipt', [a.tx_hash])) landed++;
    }
    out[`${st.seq}:${st.purpose}`] = landed;
  }
  return out;
}

async function stepId(sweepId: string, seq: number): Promise<string | undefined> {
  return (await h.t.db.selectFrom('sweep_steps').select('id').where('sweep_id', '=', sweepId).where('seq', '=', seq).executeTakeFirst())
    ?.id;
}

const FAILPOINTS = ['outbound:after_sign', 'outbound:after_broadcast', 'outbound:after_receipt'] as const;

describe.each(['fund', 'transfer'] as const)('sweep run SIGKILLed at the %s step', (purpose) => {
  it.each(FAILPOINTS)(
    'at %s: a second run resumes; one movement per address, the ledger equals the chain',
    async (failpoint) => {
      const { shop, deposit, treasury } = await fundedMerchant(`Crash ${purpose} ${failpoint}`);
      const doomed = await sweepRun(shop.id, { SP_FAILPOINTS: failpoint, SP_FAILPOINTS_SWEEP_STEP: purpose });
      expect(doomed.signal, doomed.err).toBe('SIGKILL');
      const [sweep] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 });
      expect(sweep!.status).toBe('running');
      const killed = sweep!.steps.find((s) => s.purpose === purpose)!;
      const attempts = await sweepStepAttempts(h.t.db, (await stepId(sweep!.id, killed.seq))!);
      expect(attempts).toHaveLength(1);
      if (failpoint === 'outbound:after_sign') {
        expect(attempts[0]!.state).toBe('signed');
        expect(await h.node.rpc('eth_getTransactionReceipt', [attempts[0]!.tx_hash])).toBeNull(); // never broadcast
      }

      const survivor = await sweepRun(shop.id, {});
      expect(survivor.code, survivor.err).toBe(0);
      const report = JSON.parse(survivor.out);
      expect(report.created).toEqual([]); // the address was in the running sweep: nothing planned twice
      expect(report.resumed.find((s: { id: string }) => s.id === sweep!.id)?.status).toBe('completed');

      const [done] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 });
      expect(done!.status).toBe('completed');
      // Exactly one token movement out of the address, to the treasury, of the planned amount, and recorded as such.
      const moved = await transfersFrom(h.node, h.tokens.USDT.address, deposit);
      expect(moved).toEqual([{ to: treasury, amount: 7_000_000n, tx: done!.sources[0]!.tx_hash }]);
      expect(done!.sources[0]).toMatchObject({ state: 'swept', swept_base: 7_000_000n });
      expect(await tokenBalance(h, 'USDT', treasury)).toBe(7_000_000n);
      // The step that was killed was never signed again: its one attempt is the one that landed.
      const after = await sweepStepAttempts(h.t.db, (await stepId(done!.id, killed.seq))!);
      expect(after.map((a) => [a.tx_hash, a.state])).toEqual([[attempts[0]!.tx_hash, 'confirmed']]);
      // At most one attempt of any step landed; one top-up reached the address.
      const landed = await landedPerStep(done!.id);
      for (const [k, n] of Object.entries(landed)) expect(n, k).toBeLessThanOrEqual(1);
      expect(landed[`0:fund`]).toBe(1);
    },
    240_000,
  );
});

describe('a reorg', () => {
  it('that removes the transfer before it is final: the same bytes land again and the sweep completes once', async () => {
    const { shop, deposit, treasury } = await fundedMerchant('Reorg');
    miner?.stop();
    miner = undefined;
    await h.node.rpc('evm_setAutomine', [false]);
    try {
      const plan = await planSweeps(deps.planner, { merchantId: shop.id });
      const [sweep] = await createSweeps(h.t.db, plan.batches);
      const steps = async () => (await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 }))[0]!.steps;
      // Drive the fund step to finality, until the transfer is signed and in the mempool.
      for (let i = 0; i < 200; i++) {
        await advanceSweep(deps.engine, sweep!.id);
        const transfer = (await steps()).find((s) => s.purpose === 'transfer')!;
        if (transfer.tx_hash) break;
        await h.node.mine(1);
      }
      const transfer = (await steps()).find((s) => s.purpose === 'transfer')!;
      expect(transfer.tx_hash).toMatch(/^0x/);
      const snapshot = await h.node.rpc<string>('evm_snapshot');
      await h.node.mine(1); // the transfer is mined: one confirmation, not final (2 are required)
      expect(await h.node.rpc('eth_getTransactionReceipt', [transfer.tx_hash])).not.toBeNull();
      await advanceSweep(deps.engine, sweep!.id);
      expect((await steps()).find((s) => s.purpose === 'transfer')!.status).toBe('processing'); // waits for finality

      // The block is reorganised away: the transfer is no longer on chain.
      await h.node.rpc('evm_revert', [snapshot]);
      await h.node.rpc('anvil_dropAllTransactions');
      expect(await h.node.rpc('eth_getTransactionReceipt', [transfer.tx_hash])).toBeNull();
      expect(await tokenBalance(h, 'USDT', deposit)).toBe(7_000_000n);

      // The engine finds it unknown, offers the same signed bytes again; once final, the sweep settles.
      await h.node.rpc('evm_setAutomine', [true]);
      for (let i = 0; i < 200; i++) {
        const r = await advanceSweep(deps.engine, sweep!.id);
        if (r.kind === 'done') break;
        await h.node.mine(1);
      }
      const [done] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 });
      expect(done!.status).toBe('completed');
      const attempts = await sweepStepAttempts(h.t.db, (await stepId(done!.id, transfer.seq))!);
      expect(attempts.map((a) => [a.tx_hash, a.state])).toEqual([[transfer.tx_hash, 'confirmed']]); // never re-signed
      const moved = await transfersFrom(h.node, h.tokens.USDT.address, deposit);
      expect(moved).toEqual([{ to: treasury, amount: 7_000_000n, tx: transfer.tx_hash }]);
      expect(done!.sources[0]).toMatchObject({ swept_base: 7_000_000n, tx_hash: transfer.tx_hash });
    } finally {
      await h.node.rpc('evm_setAutomine', [true]);
      miner = backgroundMiner(h.node, 150);
    }
  }, 240_000);
});
