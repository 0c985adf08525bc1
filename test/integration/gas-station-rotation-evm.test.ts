import { Transaction, Wallet, getBytes } from 'ethers';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELEGATION_PREFIX, sweepDelegateAddress } from '../../chains/evm/sweep-7702.js';
import { OPERATOR_SLOT, isSweeper, type KeyPath, type TxSigner } from '../../chains/types.js';
import { SignerRefusedError } from '../../src/domain/signer-errors.js';
import type { IntentSigner } from '../../src/signer/intent.js';
import { RemoteSigner } from '../../src/signer/remote-signer.js';
import { ApiError } from '../../src/domain/errors.js';
import { currentGasStationSlot, gasStationRotations } from '../../src/ledger/treasury/gas-station.js';
import { listSweeps } from '../../src/ledger/treasury/sweeps.js';
import { rotateGasStation } from '../../src/operations/gas-station.js';
import type { SweepOpsDeps } from '../../src/operations/treasury-deps.js';
import { planSweeps } from '../../src/treasury/planner.js';
import { createSweeps, driveSweeps } from '../../src/treasury/runner.js';
import { backgroundMiner } from '../support/chain-watch.js';
import { fund, payFrom, signer, walletAt } from '../support/evm-tokens/scenario.js';
import { startFakeTicker, type FakeTicker } from '../support/fake-ticker.js';
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

// `treasury rotate-gas-station` on EVM (docs/treasury.md, "Rotating the gas station"), on a Prague Anvil: refused while
// a sweep runs; then a new generation (slot 2) with its audit row, the old gas station's ETH drained to the new one
// once through the outbound engine (journaled); the next sweep is sent by the new gas station through the new
// merchant delegate (bound to the new gas station), and a deposit address still delegated to the old delegate is
// re-authorized to the new one in that sweep. Run again, nothing is drained twice.

let h: ServiceHarness;
let ticker: FakeTicker;
let miner: { stop(): void } | undefined;
let station0: string;

beforeAll(async () => {
  h = await startServiceHarness({ extraEnv: { ROLES: 'api,watcher' } });
  ticker = await startFakeTicker({ coinbaseRates: ETH_PRICES });
  station0 = (await gasStation(h)).toLowerCase();
  await h.node.rpc('anvil_setBalance', [station0, '0x8ac7230489e80000']); // 10 ETH
  await permissivePolicy(h);
  miner = backgroundMiner(h.node, 150);
}, 120_000);
afterAll(async () => {
  miner?.stop();
  await ticker?.close();
  await h?.close();
});

const USDT = (n: number) => BigInt(n) * 1_000_000n;
const eth = async (a: string) => BigInt(await h.node.rpc<string>('eth_getBalance', [a, 'latest']));
const code = (a: string) => h.node.rpc<string>('eth_getCode', [a, 'latest']);

/** Every send of this test is signed by the harness's signer role, which justifies it from the ledger (docs/signer.md). */
const remote = () => new RemoteSigner(h.env.SIGNER_SOCKET!) as unknown as TxSigner;

function ops(): SweepOpsDeps {
  const { engine } = sweepDeps(h, ticker);
  return {
    db: h.t.db,
    adapters: h.service.adapters,
    treasury: {
      keys: signer,
      signer: remote(),
      prices: () => {
        throw new Error('not needed');
      },
      engine: { pollMs: engine.pollMs, stuckAfterMs: engine.stuckAfterMs, feeBumpPercent: engine.feeBumpPercent },
    },
  };
}

describe('rotating the EVM gas station', () => {
  it('moves sweeps to a new gas station and delegate, re-delegates old deposit addresses, and drains the old station once', async () => {
    const { planner, engine: inProcess } = sweepDeps(h, ticker);
    const engine = { ...inProcess, signer: remote() };
    const shop = await h.newMerchant('Rotate');
    const treasury = Wallet.createRandom().address.toLowerCase();
    await treasuryFor(h, shop, treasury);
    const paid = await h.paidSession(shop, { amount: '11.00' });
    await confirmedDeposits(h, paid.id);
    const deposit = await depositAddressOf(h, paid.id);

    // A sweep is running: the rotation is refused (its steps name the current gas station).
    const created = await createSweeps(h.t.db, (await planSweeps(planner, { merchantId: shop.id })).batches);
    expect(created).toHaveLength(1);
    const refused = await rotateGasStation(ops(), { network: 'ethereum', mode: 'test', actor: 'alice' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe('sweep_running');
    expect(await currentGasStationSlot(h.t.db, 'ethereum', 'test')).toEqual({ generation: 0, slot: 0 });
    expect(await driveSweeps(engine, { timeoutMs: 30_000 })).toBe(0);
    const oldDelegate = sweepDelegateAddress(station0, [shop.hotWallet, treasury]);
    expect((await code(deposit)).toLowerCase()).toBe(`${DELEGATION_PREFIX}${oldDelegate.slice(2)}`);

    // The rotation: generation 1 at slot 2 (never the resources slot), audited; the old station's ETH drained once.
    const adapter = h.service.adapters.get('ethereum', 'test')!;
    if (!isSweeper(adapter)) throw new Error('not a sweeper');
    const station1 = (await adapter.deriveOperatorWallet(signer, 2)).address.toLowerCase();
    expect(station1).not.toBe((await adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.resources)).address.toLowerCase());
    const before = await eth(station0);
    const r = await rotateGasStation(ops(), {
      network: 'ethereum',
      mode: 'test',
      actor: 'alice',
      note: 'key exposure drill',
      waitMs: 30_000,
    });
    expect(r).toMatchObject({
      outcome: 'rotated',
      old: { generation: 0, address: station0 },
      current: { generation: 1, address: station1 },
    });
    expect(await currentGasStationSlot(h.t.db, 'ethereum', 'test')).toEqual({ generation: 1, slot: 2 });
    const audit = await gasStationRotations(h.t.db, 'ethereum', 'test');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      generation: 1,
      slot: 2,
      address: station1,
      previous_address: station0,
      actor: 'alice',
      note: 'key exposure drill',
    });
    expect(r.drains).toHaveLength(1);
    const drain = r.drains[0]!;
    expect(drain).toMatchObject({
      status: 'succeeded',
      from_generation: 0,
      to_generation: 1,
      from_address: station0,
      to_address: station1,
    });
    expect(await eth(station1)).toBe(drain.amount);
    // Everything but the drain's fee and the dust of its fee cap reached the new station.
    expect(drain.amount! + drain.fee!).toBe(before - (await eth(station0)));
    expect(await eth(station0)).toBeLessThan(drain.fee! * 2n);
    const tx = await h.node.rpc<{ from: string; to: string }>('eth_getTransactionByHash', [drain.tx_hash]);
    expect([tx.from.toLowerCase(), tx.to.toLowerCase()]).toEqual([station0, station1]);
    // Journaled: old station → new station, and the fee.
    const legs = await sql<{ account: string; amount: string }>`
      select l.account, l.amount::text from journal_entries e join journal_legs l on l.entry_id = e.id
      where e.tx_hash = ${drain.tx_hash} and e.leg_key = 'drain' order by l.amount`.execute(h.t.db);
    expect(legs.rows.map((x) => [x.account.split(':').at(-1), BigInt(x.amount)])).toEqual(
      expect.arrayContaining([
        [station0, -(drain.amount! + drain.fee!)],
        [station1, drain.amount!],
      ]),
    );

    // Run again: nothing to resume, no new generation; the dust left is not worth a drain: none, never doubled.
    const again = await rotateGasStation(ops(), { network: 'ethereum', mode: 'test', actor: 'alice', drainOnly: true, waitMs: 10_000 });
    expect(again).toMatchObject({ outcome: 'drained', drains: [] });
    const drains = await h.t.db.selectFrom('gas_station_drains').selectAll().where('status', '=', 'succeeded').execute();
    expect(drains).toHaveLength(1);
    expect(await currentGasStationSlot(h.t.db, 'ethereum', 'test')).toEqual({ generation: 1, slot: 2 });

    // A late payment to the old deposit address, and a new one: the next sweep is the new station's, through the new
    // delegate; the old address (delegated to the old delegate) is authorized again.
    const payer = walletAt(40, h.node.provider);
    await h.node.rpc('anvil_setBalance', [payer.address, '0xde0b6b3a7640000']);
    await fund(h.tokens.USDT, payer.address, USDT(5));
    await payFrom(payer, h.tokens.USDT, deposit, USDT(5));
    await h.node.mine(2);
    const paid2 = await h.paidSession(shop, { amount: '7.00' });
    await confirmedDeposits(h, paid2.id);
    const deposit2 = await depositAddressOf(h, paid2.id);
    await h.until(async () =>
      (await planSweeps(planner, { merchantId: shop.id })).batches[0]?.request.sources.length === 2 ? true : undefined,
    );
    const report = await planSweeps(planner, { merchantId: shop.id });
    expect(report.operatorWallets.find((w) => w.role === 'gas_station')?.address).toBe(station1);
    const [sweep] = await createSweeps(h.t.db, report.batches);
    expect(await driveSweeps(engine, { timeoutMs: 30_000 })).toBe(0);
    const newDelegate = sweepDelegateAddress(station1, [shop.hotWallet, treasury]);
    expect(newDelegate).not.toBe(oldDelegate);
    const [done] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 });
    expect(done).toMatchObject({ id: sweep!.id, status: 'completed', method: 'evm-7702-batch', swept_base: USDT(12) });
    const batch = done!.steps.find((s) => s.purpose === 'batch')!;
    expect(done!.steps.find((s) => s.purpose === 'deploy')?.status).toBe('succeeded');
    const batchTx = await h.node.rpc<{ from: string; to: string }>('eth_getTransactionByHash', [batch.tx_hash]);
    expect([batchTx.from.toLowerCase(), batchTx.to.toLowerCase()]).toEqual([station1, newDelegate]);
    // params.authorizations: `address:nonce` of each source that (re-)delegates in the batch.
    const auths = ((batch.step as { params: Record<string, string> }).params.authorizations ?? '')
      .split(',')
      .map((a) => a.split(':')[0]!.toLowerCase());
    expect(auths.sort()).toEqual([deposit, deposit2].sort());
    for (const d of [deposit, deposit2]) expect((await code(d)).toLowerCase()).toBe(`${DELEGATION_PREFIX}${newDelegate.slice(2)}`);
    expect(await tokenBalance(h, 'USDT', treasury)).toBe(USDT(11) + USDT(12));

    // A rotation whose command stops before the drain lands (no wait here): run again, the drain is resumed and lands
    // once; no third generation is written.
    const left = await rotateGasStation(ops(), { network: 'ethereum', mode: 'test', actor: 'bob', waitMs: 0 });
    expect(left).toMatchObject({ outcome: 'rotated', current: { generation: 2 } });
    expect(left.drains.map((d) => [d.from_generation, d.status])).toEqual([[1, 'processing']]);
    // While it waits, the signer refuses any other drain of the retired station: to anyone but the current station,
    // with calldata, or with another key than the retired generation's.
    const station2 = await adapter.deriveOperatorWallet(signer, 3);
    const retired = await adapter.deriveOperatorWallet(signer, 2);
    const intent = { purpose: 'gas_station_drain' as const, drain_id: String(left.drains[0]!.id) };
    const forge = async (key: KeyPath, to: string, data = '0x') => {
      const t = Transaction.from({
        type: 2,
        chainId: 31337n,
        nonce: 99,
        to,
        data,
        value: 1000n,
        gasLimit: 21_000n,
        maxFeePerGas: 10n ** 10n,
        maxPriorityFeePerGas: 1n,
      });
      const err = await (new RemoteSigner(h.env.SIGNER_SOCKET!) as IntentSigner)
        .signSecp256k1Digest(key, getBytes(t.unsignedHash), { kind: 'evm-transaction', unsignedSerialized: t.unsignedSerialized }, intent)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SignerRefusedError);
      return (err as SignerRefusedError).code;
    };
    expect(await forge(retired.key, Wallet.createRandom().address)).toBe('wrong_recipient');
    expect(await forge(retired.key, station2.address, '0xa9059cbb')).toBe('wrong_method');
    expect(await forge(station2.key, station2.address)).toBe('wrong_key');
    const resumed = await rotateGasStation(ops(), { network: 'ethereum', mode: 'test', actor: 'bob', waitMs: 30_000 });
    expect(resumed).toMatchObject({ outcome: 'resumed', old: { generation: 1, address: station1 }, current: { generation: 2 } });
    expect(resumed.drains.map((d) => [d.from_generation, d.status])).toEqual([[1, 'succeeded']]);
    expect(await currentGasStationSlot(h.t.db, 'ethereum', 'test')).toEqual({ generation: 2, slot: 3 });
    expect(await h.t.db.selectFrom('gas_station_drains').select('id').where('from_generation', '=', 1).execute()).toHaveLength(1);
    expect(await eth(resumed.current.address)).toBe(resumed.drains[0]!.amount);
  }, 55_000);
});
