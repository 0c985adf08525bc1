import { createTransferCheckedInstruction } from '@solana/spl-token';
import { ComputeBudgetProgram, Keypair, PublicKey, SystemProgram, TransactionMessage, type TransactionInstruction } from '@solana/web3.js';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSweeper, OPERATOR_SLOT, type KeyPath, type TxSigner } from '../../chains/types.js';
import { SignerRefusedError } from '../../src/domain/signer-errors.js';
import type { IntentSigner } from '../../src/signer/intent.js';
import { RemoteSigner } from '../../src/signer/remote-signer.js';
import { setTreasuryDestination } from '../../src/ledger/treasury/destinations.js';
import { currentGasStationSlot, gasStationRotations } from '../../src/ledger/treasury/gas-station.js';
import { listSweeps } from '../../src/ledger/treasury/sweeps.js';
import { rotateGasStation } from '../../src/operations/gas-station.js';
import { createNativePriceService } from '../../src/rates/native-prices.js';
import { planSweeps } from '../../src/treasury/planner.js';
import { createSweeps, driveSweeps } from '../../src/treasury/runner.js';
import { signer } from '../support/evm-tokens/scenario.js';
import type { FakeTicker } from '../support/fake-ticker.js';
import { startSolanaServiceHarness, type SolanaServiceHarness } from '../support/solana-service-harness.js';
import { solanaSweepSetup } from '../support/sweep-setup.js';

// A gas-station rotation on Solana (docs/treasury.md, "Rotating the gas station"), on the LiteSVM endpoint: the audit
// row and the ledger's current slot (2); the old gas station's lamports drained once to the new one (the account left
// at 0, amount + fee = what it held, journaled); the planner's operator wallets and its batches naming the new gas
// station (the fee payer), and a sweep the new gas station pays. Every send is signed by the harness's signer role,
// which refuses forged drains (to a stranger, an extra instruction, another key or fee payer).

let h: SolanaServiceHarness;
let ticker: FakeTicker;
let station0: string;

beforeAll(async () => {
  h = await startSolanaServiceHarness({ extraEnv: { ROLES: 'api,watcher' } });
  ({ ticker, station: station0 } = await solanaSweepSetup(h, { token: 'USDC' }));
}, 180_000);
afterAll(async () => {
  await ticker?.close();
  await h?.close();
});

/** Every send of this test is signed by the harness's signer role, which justifies it from the ledger (docs/signer.md). */
const remote = () => new RemoteSigner(h.env.SIGNER_SOCKET!) as unknown as TxSigner;
const lamports = async (a: string) => BigInt(await h.conn.getBalance(new PublicKey(a), 'confirmed'));

describe('rotating the Solana gas station', () => {
  it('drains the old gas station once, then plans and pays the next sweep from the new one; the rotation is audited', async () => {
    const adapter = h.service.adapters.get('solana', 'test')!;
    if (!isSweeper(adapter)) throw new Error('not a sweeper');
    const prices = createNativePriceService({ sources: ['coinbase'], coinbaseBaseUrl: ticker.url, timeoutMs: 2000, cacheTtlMs: 0 });
    const planner = { db: h.t.db, adapters: h.service.adapters, keys: signer, prices };
    const engineSettings = { pollMs: 50, stuckAfterMs: 120_000, feeBumpPercent: 25 };
    const engine = { db: h.t.db, adapters: h.service.adapters, signer: remote(), ...engineSettings };
    const ops = () => ({
      db: h.t.db,
      adapters: h.service.adapters,
      treasury: { keys: signer, signer: remote(), prices: () => prices, engine: engineSettings },
    });

    const before = await lamports(station0);
    const r = await rotateGasStation(ops(), { network: 'solana', mode: 'test', actor: 'carol', note: 'drill', waitMs: 30_000 });
    const station1 = (await adapter.deriveOperatorWallet(signer, 2)).address;
    expect(station1).not.toBe((await adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.resources)).address);
    expect(r).toMatchObject({
      outcome: 'rotated',
      old: { generation: 0, address: station0 },
      current: { generation: 1, address: station1 },
      drainSupported: true,
    });
    expect(await currentGasStationSlot(h.t.db, 'solana', 'test')).toEqual({ generation: 1, slot: 2 });
    expect(await gasStationRotations(h.t.db, 'solana', 'test')).toMatchObject([
      { generation: 1, actor: 'carol', note: 'drill', address: station1 },
    ]);
    // The drain: everything the old station held reached the new one but the fee; the old account is left at 0.
    expect(r.drains).toHaveLength(1);
    const drain = r.drains[0]!;
    expect(drain).toMatchObject({
      status: 'succeeded',
      from_generation: 0,
      to_generation: 1,
      from_address: station0,
      to_address: station1,
    });
    expect(await lamports(station0)).toBe(0n);
    expect(await lamports(station1)).toBe(drain.amount);
    expect(drain.amount! + drain.fee!).toBe(before);
    expect(drain.fee!).toBeGreaterThanOrEqual(5_000n);
    expect(drain.fee!).toBeLessThan(100_000n);
    const landed = await h.conn.getTransaction(drain.tx_hash!, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(landed?.transaction.message.staticAccountKeys[0]?.toBase58()).toBe(station0);
    expect(BigInt(landed!.meta!.fee)).toBe(drain.fee);
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
    // Both stations stay watched wallets (reconcile keeps accounting for the old one's lamports).
    const watched = await h.t.db
      .selectFrom('journal_wallets')
      .select('address')
      .where('network', '=', 'solana')
      .where('role', '=', 'gas_station')
      .execute();
    expect(watched.map((w) => w.address).sort()).toEqual([station0, station1].sort());

    // Run again: nothing left to drain, never doubled; no new generation.
    const again = await rotateGasStation(ops(), { network: 'solana', mode: 'test', actor: 'carol', drainOnly: true, waitMs: 10_000 });
    expect(again).toMatchObject({ outcome: 'drained', drains: [] });
    expect(await h.t.db.selectFrom('gas_station_drains').select('id').execute()).toHaveLength(1);
    expect(await currentGasStationSlot(h.t.db, 'solana', 'test')).toEqual({ generation: 1, slot: 2 });

    h.rpc.validator.airdrop(station1, 5_000_000_000n);
    const shop = await h.newMerchant('Rotated');
    const treasury = Keypair.generate().publicKey.toBase58();
    await setTreasuryDestination(h.t.db, {
      merchantId: shop.id,
      network: 'solana',
      mode: 'test',
      treasuryAddress: treasury,
      actor: 'test',
    });
    const s = await h.paidSession(shop, { amount: '9.00', token: 'USDC' });
    await h.until(async () => {
      const rows = await h.t.db.selectFrom('deposits').select('status').where('session_id', '=', s.id).execute();
      return rows.length > 0 && rows.every((x) => x.status === 'confirmed') ? true : undefined;
    }, 60_000);

    const report = await planSweeps(planner, { merchantId: shop.id });
    expect(report.operatorWallets.find((w) => w.role === 'gas_station')?.address).toBe(station1);
    expect(report.batches).toHaveLength(1);
    expect(report.batches[0]!.request.gasStation.address).toBe(station1);
    expect(report.batches[0]!.plan.steps.every((st) => st.from.address === station1)).toBe(true);

    await createSweeps(h.t.db, report.batches);
    expect(await driveSweeps(engine, { timeoutMs: 30_000 })).toBe(0);
    const [done] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 });
    expect(done).toMatchObject({ status: 'completed', swept_base: 9_000_000n });
    expect(await h.transfersFrom(h.mints.USDC, station1, treasury)).toHaveLength(1);
    // The old gas station paid nothing.
    expect(await lamports(station0)).toBe(0n);

    // A rotation whose command stops before its drain lands: while it waits, the signer refuses any other drain of the
    // retired station (to a stranger, with another instruction, another key, another fee payer); run again, it lands once.
    const left = await rotateGasStation(ops(), { network: 'solana', mode: 'test', actor: 'dave', waitMs: 0 });
    expect(left).toMatchObject({ outcome: 'rotated', current: { generation: 2 } });
    expect(left.drains.map((d) => [d.from_generation, d.status])).toEqual([[1, 'processing']]);
    const retired = await adapter.deriveOperatorWallet(signer, 2);
    const station2 = await adapter.deriveOperatorWallet(signer, 3);
    const intent = { purpose: 'gas_station_drain' as const, drain_id: String(left.drains[0]!.id) };
    const { blockhash } = await h.conn.getLatestBlockhash('confirmed');
    const pay = (from: string, to: string) =>
      SystemProgram.transfer({ fromPubkey: new PublicKey(from), toPubkey: new PublicKey(to), lamports: 1000n });
    const forge = async (key: KeyPath, payer: string, ixs: TransactionInstruction[]) => {
      const message = new TransactionMessage({
        payerKey: new PublicKey(payer),
        recentBlockhash: blockhash,
        instructions: [ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1n }), ...ixs],
      }).compileToV0Message();
      const err = await (new RemoteSigner(h.env.SIGNER_SOCKET!) as IntentSigner)
        .signEd25519(key, message.serialize(), intent)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SignerRefusedError);
      return (err as SignerRefusedError).code;
    };
    const stranger = Keypair.generate().publicKey.toBase58();
    expect(await forge(retired.key, retired.address, [pay(retired.address, stranger)])).toBe('wrong_recipient');
    expect(await forge(retired.key, retired.address, [pay(retired.address, station2.address), pay(retired.address, stranger)])).toBe(
      'wrong_method',
    );
    const ata = Keypair.generate().publicKey;
    const extra = createTransferCheckedInstruction(ata, new PublicKey(h.mints.USDC), ata, new PublicKey(retired.address), 1n, 6);
    expect(await forge(retired.key, retired.address, [pay(retired.address, station2.address), extra])).toBe('wrong_method');
    expect(await forge(station2.key, station2.address, [pay(station2.address, station2.address)])).toBe('wrong_key');
    expect(await forge(retired.key, station2.address, [pay(retired.address, station2.address)])).toBe('wrong_key');
    const resumed = await rotateGasStation(ops(), { network: 'solana', mode: 'test', actor: 'dave', waitMs: 30_000 });
    expect(resumed).toMatchObject({ outcome: 'resumed', old: { generation: 1, address: station1 }, current: { generation: 2 } });
    expect(resumed.drains.map((d) => [d.from_generation, d.status])).toEqual([[1, 'succeeded']]);
    expect(await lamports(station1)).toBe(0n);
    expect(await lamports(station2.address)).toBe(resumed.drains[0]!.amount);
    expect(await h.t.db.selectFrom('gas_station_drains').select('id').where('from_generation', '=', 1).execute()).toHaveLength(1);
  }, 55_000);
});
