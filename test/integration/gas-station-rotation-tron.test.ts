import { getBytes, sha256 } from 'ethers';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeSystemRawData, type SystemContractName } from '../../chains/tron/system-contracts.js';
import { OPERATOR_SLOT, isSweeper, type KeyPath, type TxSigner } from '../../chains/types.js';
import { currentGasStationSlot, gasStationRotations } from '../../src/ledger/treasury/gas-station.js';
import { rotateGasStation } from '../../src/operations/gas-station.js';
import type { SweepOpsDeps } from '../../src/operations/treasury-deps.js';
import { SignerRefusedError } from '../../src/domain/signer-errors.js';
import type { IntentSigner } from '../../src/signer/intent.js';
import { RemoteSigner } from '../../src/signer/remote-signer.js';
import { signer } from '../support/evm-tokens/scenario.js';
import { startTronServiceHarness, type TronServiceHarness } from '../support/tron-service-harness.js';

// A gas-station rotation on TRON (docs/treasury.md, "Rotating the gas station"), on the fake java-tron: the old
// station's TRX drained once to the new one through the outbound engine and the harness's signer role, the transfer's
// burn (the new station's account creation: getCreateNewAccountFeeInSystemContract + getCreateAccountFee) taken from
// the amount so the old station is left at 0, journaled; run again, nothing is drained twice; TRX arriving later at a
// retired station is drained by --drain-only, its free bandwidth making the transfer free; forged drains refused (to a
// stranger, an extra contract, a smart-contract call, another key or owner).

let h: TronServiceHarness;
const TRX = 1_000_000n;

beforeAll(async () => {
  h = await startTronServiceHarness({ extraEnv: { ROLES: 'api' } });
}, 120_000);
afterAll(async () => {
  await h?.close();
});

/** Every send of this test is signed by the harness's signer role, which justifies it from the ledger (docs/signer.md). */
const remote = () => new RemoteSigner(h.env.SIGNER_SOCKET!) as unknown as TxSigner;

function ops(): SweepOpsDeps {
  return {
    db: h.t.db,
    adapters: h.service.adapters,
    treasury: {
      keys: signer,
      signer: remote(),
      prices: () => {
        throw new Error('not needed');
      },
      engine: { pollMs: 50, stuckAfterMs: 120_000, feeBumpPercent: 25 },
    },
  };
}

const header = { refBlockBytes: 'abcd', refBlockHash: '11'.repeat(8), expiration: 1_900_000_000_000n, timestamp: 1_899_999_940_000n };
const contract = (name: SystemContractName, owner: string, to: string, amount = 1000n) =>
  encodeSystemRawData({ ...header, name, owner, to, amount, resource: 'ENERGY', lock: false });

describe('rotating the TRON gas station', () => {
  it('drains the old gas station once, journaled; forged drains are refused', async () => {
    const adapter = h.service.adapters.get('tron', 'test')!;
    if (!isSweeper(adapter)) throw new Error('not a sweeper');
    const trx = async (a: string) => (await adapter.getBalances(a)).native;
    const station0 = adapter.normalizeAddress((await adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.gasStation)).address)!;
    const station1 = adapter.normalizeAddress((await adapter.deriveOperatorWallet(signer, 2)).address)!;
    h.fake.chain.setTrx(station0, 50n * TRX);

    const r = await rotateGasStation(ops(), { network: 'tron', mode: 'test', actor: 'erin', note: 'drill', waitMs: 30_000 });
    expect(r).toMatchObject({
      outcome: 'rotated',
      old: { generation: 0, address: station0 },
      current: { generation: 1, address: station1 },
      drainSupported: true,
    });
    expect(await currentGasStationSlot(h.t.db, 'tron', 'test')).toEqual({ generation: 1, slot: 2 });
    expect(await gasStationRotations(h.t.db, 'tron', 'test')).toMatchObject([{ generation: 1, actor: 'erin', address: station1 }]);
    expect(r.drains).toHaveLength(1);
    const drain = r.drains[0]!;
    expect(drain).toMatchObject({
      status: 'succeeded',
      from_generation: 0,
      to_generation: 1,
      from_address: station0,
      to_address: station1,
    });
    // The new station did not exist: creating it burns 1 TRX + 0.1 TRX (no staked bandwidth), taken from the amount.
    expect(drain.fee).toBe(1_100_000n);
    expect(drain.amount).toBe(50n * TRX - drain.fee!);
    expect(await trx(station0)).toBe(0n);
    expect(await trx(station1)).toBe(drain.amount);
    const legs = await sql<{ account: string; amount: string }>`
      select l.account, l.amount::text from journal_entries e join journal_legs l on l.entry_id = e.id
      where e.tx_hash = ${drain.tx_hash} and e.leg_key = 'drain' order by l.amount`.execute(h.t.db);
    expect(legs.rows.map((x) => [x.account.split(':').at(-1), BigInt(x.amount)])).toEqual(
      expect.arrayContaining([
        [station0, -(drain.amount! + drain.fee!)],
        [station1, drain.amount!],
      ]),
    );

    // Run again: nothing left, nothing drained twice, no new generation.
    const again = await rotateGasStation(ops(), { network: 'tron', mode: 'test', actor: 'erin', drainOnly: true, waitMs: 10_000 });
    expect(again).toMatchObject({ outcome: 'drained', drains: [] });
    expect(await h.t.db.selectFrom('gas_station_drains').select('id').execute()).toHaveLength(1);

    // A rotation whose command stops before its drain lands: the signer refuses any other drain of the retired station.
    const left = await rotateGasStation(ops(), { network: 'tron', mode: 'test', actor: 'erin', waitMs: 0 });
    expect(left).toMatchObject({ outcome: 'rotated', current: { generation: 2 } });
    expect(left.drains.map((d) => [d.from_generation, d.status])).toEqual([[1, 'processing']]);
    const retired = await adapter.deriveOperatorWallet(signer, 2);
    const station2 = await adapter.deriveOperatorWallet(signer, 3);
    const s2 = adapter.normalizeAddress(station2.address)!;
    const intent = { purpose: 'gas_station_drain' as const, drain_id: String(left.drains[0]!.id) };
    const forge = async (key: KeyPath, rawDataHex: string) => {
      const err = await (new RemoteSigner(h.env.SIGNER_SOCKET!) as IntentSigner)
        .signSecp256k1Digest(key, getBytes(sha256(`0x${rawDataHex}`)), { kind: 'tron-transaction', rawDataHex }, intent)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SignerRefusedError);
      return (err as SignerRefusedError).code;
    };
    const stranger = `41${'5a'.repeat(20)}`;
    expect(await forge(retired.key, contract('TransferContract', station1, stranger))).toBe('wrong_recipient');
    // Two contracts in one raw_data (protobuf fields concatenate: the second contract rides along).
    expect(await forge(retired.key, contract('TransferContract', station1, s2) + contract('TransferContract', station1, stranger))).toBe(
      'wrong_method',
    );
    expect(await forge(retired.key, contract('DelegateResourceContract', station1, s2))).toBe('wrong_method');
    expect(await forge(station2.key, contract('TransferContract', s2, s2))).toBe('wrong_key');
    expect(await forge(retired.key, contract('TransferContract', s2, s2))).toBe('wrong_key');
    const resumed = await rotateGasStation(ops(), { network: 'tron', mode: 'test', actor: 'erin', waitMs: 30_000 });
    expect(resumed).toMatchObject({ outcome: 'resumed', old: { generation: 1, address: station1 }, current: { generation: 2 } });
    expect(resumed.drains.map((d) => [d.from_generation, d.status])).toEqual([[1, 'succeeded']]);
    expect(await trx(station1)).toBe(0n);
    expect(await trx(s2)).toBe(resumed.drains[0]!.amount);

    // TRX arriving later at generation 0: --drain-only sends it to the current station; the station's free daily
    // bandwidth covers the transfer (its first drain burned the creation fee instead), so every sun arrives.
    h.fake.chain.setTrx(station0, 10n * TRX);
    const late = await rotateGasStation(ops(), { network: 'tron', mode: 'test', actor: 'erin', drainOnly: true, waitMs: 30_000 });
    expect(late.drains.map((d) => [d.from_generation, d.to_generation, d.status, d.amount, d.fee])).toEqual([
      [0, 2, 'succeeded', 10n * TRX, 0n],
    ]);
    expect(await trx(station0)).toBe(0n);
  }, 40_000);
});
