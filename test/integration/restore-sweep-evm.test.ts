import { Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSweeper } from '../../chains/types.js';
import type { Db } from '../../src/db/database.js';
import { listSweeps } from '../../src/ledger/treasury/sweeps.js';
import { planSweeps } from '../../src/treasury/planner.js';
import { createSweeps, driveSweeps } from '../../src/treasury/runner.js';
import { backgroundMiner } from '../support/chain-watch.js';
import { fund } from '../support/evm-tokens/scenario.js';
import { startFakeTicker, type FakeTicker } from '../support/fake-ticker.js';
import { dumpDatabase, startRestored, type RestoredService } from '../support/restored-service.js';
import { startServiceHarness, type ServiceHarness } from '../support/service-harness.js';
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
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Issue 36, "Restores never pay twice", for EVM sweeps (the gas top-up method on a pre-Prague Anvil: the gas station
// sends each deposit address its transfer's gas, the address transfers its tokens, the rest of the gas comes back).
// A sweep before the backup gives the gas station a nonce row in the dump; a sweep A persisted before the backup runs
// after it, and a sweep B the dump does not know sweeps a third address. On the restored database A is running again:
// its top-ups are not sent again (their sources' tokens are gone: the steps fail unsent, naming them), so the gas
// station's nonce and every balance stay as they were. The next real send from the gas station (a payment reaching an
// address later) meets the nonce guard: `payouts wallet-nonces` names the gas station, its stored nonce and the
// chain's, and once the operator accepts the chain's nonce that sweep completes once.
const USDT = (n: number) => BigInt(Math.round(n * 1_000_000));

describe('EVM: a restored backup sweeps nothing twice', () => {
  let h: ServiceHarness;
  let ticker: FakeTicker;
  let miner: { stop(): void };
  let restored: RestoredService | null = null;
  const dir = mkdtempSync(join(tmpdir(), 'sp-restore-evm-'));
  beforeAll(async () => {
    h = await startServiceHarness({ anvilArgs: ['--hardfork', 'cancun'], extraEnv: { ROLES: 'api,watcher' } });
    ticker = await startFakeTicker({ coinbaseRates: ETH_PRICES });
    await h.node.rpc('anvil_setBalance', [await gasStation(h), '0x56bc75e2d63100000']); // 100 ETH
    miner = backgroundMiner(h.node, 150);
  }, 120_000);
  afterAll(async () => {
    miner?.stop();
    await restored?.close();
    await ticker?.close();
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fails the restored sweep unsent, moves nothing twice, and holds the gas station at its next send until the accept', async () => {
    const deps = sweepDeps(h, ticker);
    const station = await gasStation(h);
    const shop = await h.newMerchant('Restored EVM sweeps');
    const treasury = Wallet.createRandom().address.toLowerCase();
    await permissivePolicy(h);
    await treasuryFor(h, shop, treasury);
    const paid = async (amount: string) => {
      const s = await h.paidSession(shop, { amount });
      await confirmedDeposits(h, s.id);
      return (await depositAddressOf(h, s.id)).toLowerCase();
    };
    const plan = async (db: Db, adapters: typeof deps.planner.adapters) =>
      (await planSweeps({ ...deps.planner, db, adapters }, { merchantId: shop.id })).batches;
    const nonce = async (a: string) => BigInt(await h.node.rpc<string>('eth_getTransactionCount', [a, 'latest']));
    const eth = async (a: string) => BigInt(await h.node.rpc<string>('eth_getBalance', [a, 'latest']));

    // Before the backup: one sweep done (the gas station's nonce row), sweep A persisted unsent, a third address paid.
    await paid('4.00');
    await createSweeps(h.t.db, await plan(h.t.db, h.service.adapters));
    expect(await driveSweeps(deps.engine, { timeoutMs: 60_000 })).toBe(0);
    const [d1, d2] = [await paid('10.00'), await paid('12.00')];
    const [sweepA] = await createSweeps(h.t.db, await plan(h.t.db, h.service.adapters));
    expect(sweepA!.method).toBe('evm-gas-topup');
    const d3 = await paid('7.00');
    const storedNonce = await nonce(station);
    const dump = await dumpDatabase(h, dir);

    // After it: A, then B (unknown to the dump).
    expect(await driveSweeps(deps.engine, { timeoutMs: 60_000 })).toBe(0);
    await createSweeps(h.t.db, await plan(h.t.db, h.service.adapters));
    expect(await driveSweeps(deps.engine, { timeoutMs: 60_000 })).toBe(0);
    const ran = await listSweeps(h.t.db, { merchantId: shop.id, limit: 5 });
    expect(ran.map((s) => s.status)).toEqual(['completed', 'completed', 'completed']);
    expect(await tokenBalance(h, 'USDT', treasury)).toBe(USDT(33));
    const wallets = [station, d1, d2, d3];
    const snapshot = async () => ({
      nonces: await Promise.all(wallets.map(nonce)),
      eth: await Promise.all(wallets.map(eth)),
      tokens: await Promise.all([treasury, d1, d2, d3].map((a) => tokenBalance(h, 'USDT', a))),
    });
    const before = await snapshot();
    // The gas station sent three top-ups after the backup (A's two, B's one); each deposit address one transfer.
    expect(before.nonces[0]).toBe(storedNonce + 3n);
    expect(before.tokens).toEqual([USDT(33), 0n, 0n, 0n]);

    // Restored: A runs again (the worker's tick and this driver) and fails at once, nothing signed, nothing moved.
    restored = await startRestored(h, dump, { ROLES: 'api,watcher,worker' });
    const { db, service } = restored;
    const engine = { ...deps.engine, db, adapters: service.adapters };
    expect(await driveSweeps(engine, { timeoutMs: 30_000 })).toBe(0);
    const [restoredA] = await listSweeps(db, { merchantId: shop.id, limit: 1 });
    expect(restoredA).toMatchObject({ id: sweepA!.id, status: 'failed', swept_base: 0n });
    expect(restoredA!.failure_reason).toMatch(/already left/);
    expect(restoredA!.steps.every((st) => st.tx_hash === null)).toBe(true);
    await h.node.mine(2);
    expect(await snapshot()).toEqual(before);
    // The planner reads the chain: nothing to sweep at the three addresses.
    expect(await plan(db, service.adapters)).toEqual([]);

    // A later payment to d1: its sweep's top-up meets the nonce guard (the chain is 3 ahead of the stored nonce).
    await fund(h.tokens.USDT, d1, USDT(5));
    const adapter = service.adapters.require('ethereum', 'test');
    if (!isSweeper(adapter)) throw new Error('not a Sweeper');
    await h.until(async () => ((await adapter.finalTokenBalances('USDT', [d1]))[0]! >= USDT(5) ? true : undefined), 60_000);
    const [sweepC] = await createSweeps(db, await plan(db, service.adapters));
    expect(await driveSweeps(engine, { timeoutMs: 4_000 })).toBe(1);
    type NonceRow = { address: string; next_nonce: string; unknown_transactions: { chain_nonce: string } | null };
    const noted = (await restored.cli<NonceRow[]>('wallet-nonces', '--network', 'ethereum')).filter((r) => r.unknown_transactions);
    expect(noted.map((r) => [r.address.toLowerCase(), r.next_nonce, r.unknown_transactions!.chain_nonce])).toEqual([
      [station.toLowerCase(), String(storedNonce), String(storedNonce + 3n)],
    ]);
    expect(await nonce(station)).toBe(storedNonce + 3n);
    await restored.cli(
      'wallet-accept-nonce',
      '--network',
      'ethereum',
      '--mode',
      'test',
      '--address',
      station,
      '--nonce',
      String(storedNonce + 3n),
      '--actor',
      'ops@example',
      '--note',
      'restore: three top-ups of sweeps run after the backup',
    );
    expect(await driveSweeps(engine, { timeoutMs: 60_000 })).toBe(0);
    expect((await listSweeps(db, { merchantId: shop.id, limit: 1 }))[0]).toMatchObject({
      id: sweepC!.id,
      status: 'completed',
      swept_base: USDT(5),
    });
    expect(await tokenBalance(h, 'USDT', treasury)).toBe(USDT(38));
    expect(await nonce(station)).toBe(storedNonce + 4n);
  }, 180_000);
});
