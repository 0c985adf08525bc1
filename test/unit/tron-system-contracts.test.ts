import { describe, expect, it } from 'vitest';
import { utils } from 'tronweb';
import {
  contractTypeOf,
  decodeSystemRawData,
  encodeSystemRawData,
  systemValueJson,
  type SystemContractValue,
} from '../../chains/tron/system-contracts.js';
import { ACTIVATION_SUN, BandwidthBudget, TRX, energyOfStake, stakeForEnergy, withMargin } from '../../chains/tron/sweep-common.js';

// The system contracts a TRON sweep signs, encoded by hand (chains/tron/system-contracts.ts), against a published
// transaction and against tronweb's own protobuf encoder (txJsonToPb), and the Stake 2.0 arithmetic of the sweeps.

// A TRX TransferContract from TokenPocket's published QR protocol example (100 sun).
const TP_RAW =
  '0a027cea2208cb7295aa4aa8065040f89bf89fe7305a65080112610a2d747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e5472616e73666572436f6e747261637412300a1541f90a4115ca0859c0db8415d73b3a22626506cbbe121541be9cd66315067fd1c588b2cf7dd15969de15f556186470facbf49fe730';
const OWNER = '41f90a4115ca0859c0db8415d73b3a22626506cbbe';
const TO = '41be9cd66315067fd1c588b2cf7dd15969de15f556';
const header = { refBlockBytes: '7cea', refBlockHash: 'cb7295aa4aa80650', expiration: 1676983275000n, timestamp: 1676983215610n };

const tronwebRawHex = (v: SystemContractValue): string => {
  const t = (utils as unknown as { transaction: { txJsonToPb(tx: unknown): unknown; txPbToRawDataHex(pb: unknown): string } }).transaction;
  const raw = {
    contract: [{ parameter: { value: systemValueJson(v), type_url: `type.googleapis.com/protocol.${v.name}` }, type: v.name }],
    ref_block_bytes: header.refBlockBytes,
    ref_block_hash: header.refBlockHash,
    expiration: Number(header.expiration),
    timestamp: Number(header.timestamp),
  };
  return t.txPbToRawDataHex(t.txJsonToPb({ raw_data: raw, visible: false })).toLowerCase();
};

describe('TRON system contracts', () => {
  it('decodes a published TransferContract and re-encodes it byte for byte', () => {
    const r = decodeSystemRawData(TP_RAW);
    expect(r).toMatchObject({ name: 'TransferContract', owner: OWNER, to: TO, amount: 100n, contractCount: 1, ...header });
    expect(contractTypeOf(TP_RAW)).toBe(1);
    expect(encodeSystemRawData(r)).toBe(TP_RAW);
  });

  const cases: SystemContractValue[] = [
    { name: 'TransferContract', owner: OWNER, to: TO, amount: ACTIVATION_SUN, resource: 'BANDWIDTH', lock: false, lockPeriod: 0n },
    { name: 'FreezeBalanceV2Contract', owner: OWNER, to: '', amount: 250n * TRX, resource: 'ENERGY', lock: false, lockPeriod: 0n },
    { name: 'DelegateResourceContract', owner: OWNER, to: TO, amount: 6_500n * TRX, resource: 'ENERGY', lock: false, lockPeriod: 0n },
    { name: 'UnDelegateResourceContract', owner: OWNER, to: TO, amount: 6_500n * TRX, resource: 'ENERGY', lock: false, lockPeriod: 0n },
  ];
  for (const v of cases) {
    it(`${v.name}: the same bytes as tronweb's encoder, and decodes back`, () => {
      const hex = encodeSystemRawData({ ...v, ...header });
      expect(hex).toBe(tronwebRawHex(v));
      expect(decodeSystemRawData(hex)).toMatchObject({ ...v, ...header, contractCount: 1 });
    });
  }

  it('refuses to decode a TriggerSmartContract as a system contract', () => {
    const trigger = TP_RAW.replace('5a65080112', '5a65081f12'); // contract type 1 → 31
    expect(contractTypeOf(trigger)).toBe(31);
    expect(() => decodeSystemRawData(trigger)).toThrow(/not a system contract/);
  });
});

describe('Stake 2.0 arithmetic of the sweeps', () => {
  const L = 180_000_000_000n;
  const W = 18_000_000_000n; // 10 energy per staked TRX

  it('stakes whole TRX, at least 1 TRX, enough for the energy; the stake yields at least that energy', () => {
    expect(stakeForEnergy(65_000n, L, W)).toBe(6_500n * TRX);
    expect(stakeForEnergy(65_001n, L, W)).toBe(6_501n * TRX);
    expect(stakeForEnergy(3n, L, W)).toBe(1n * TRX);
    for (const e of [1n, 9n, 10n, 31_337n, 130_285n]) expect(energyOfStake(stakeForEnergy(e, L, W), L, W)).toBeGreaterThanOrEqual(e);
    expect(() => stakeForEnergy(1n, 0n, W)).toThrow(/TotalEnergyLimit/);
  });

  it('adds the margin rounding up', () => {
    expect(withMargin(64_285n, 20)).toBe(77_142n);
    expect(withMargin(100n, 0)).toBe(100n);
  });

  it('budgets bandwidth: staked, then free, else burned; creating an account burns getCreateAccountFee instead', () => {
    const p = { energySun: 100n, bandwidthSun: 1000n, createAccountFeeSun: 100_000n, createNewAccountFeeSun: 1_000_000n };
    const b = new BandwidthBudget({ stakedNetLeft: 300n, freeNetLeft: 600n }, p);
    expect(b.take(300n)).toBe(0n); // staked
    expect(b.take(300n, true)).toBe(100_000n); // free bandwidth cannot create an account
    expect(b.take(300n)).toBe(0n); // free
    expect(b.take(300n)).toBe(0n); // free
    expect(b.take(300n)).toBe(300_000n); // burned
  });
});
