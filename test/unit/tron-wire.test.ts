import { describe, expect, it } from 'vitest';
import { sha256 } from 'ethers';
import {
  decodeSignedTransaction,
  decodeTriggerRawData,
  encodeSignedTransaction,
  encodeTriggerRawData,
  txIdOf,
} from '../../chains/tron/protobuf.js';
import { CONTRACT_RESULTS, classifyBroadcast, classifyContractResult, parseContractResult } from '../../chains/tron/receipt.js';
import { decodeNodeMessage, int64 } from '../../chains/tron/wallet-api.js';
import { formatTokenAmount, tronPaymentLinks } from '../../chains/tron/payment-uri.js';
import { loadTronExtraSettings } from '../../chains/tron/config.js';
import { trxNeededFor } from '../../chains/tron/resources.js';

// A TRX TransferContract from TokenPocket's published QR protocol example: raw_data_hex and the fields it encodes.
// Our decoder only accepts TriggerSmartContract payloads, but field parsing (ref block, expiration) must agree.
const TP_RAW =
  '0a027cea2208cb7295aa4aa8065040f89bf89fe7305a65080112610a2d747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e5472616e73666572436f6e747261637412300a1541f90a4115ca0859c0db8415d73b3a22626506cbbe121541be9cd66315067fd1c588b2cf7dd15969de15f556186470facbf49fe730';

describe('TRON protobuf', () => {
  it('decodes the header fields of a published transaction', () => {
    const r = decodeTriggerRawData(TP_RAW);
    expect(r).toMatchObject({
      refBlockBytes: '7cea',
      refBlockHash: 'cb7295aa4aa80650',
      expiration: 1676983275000n,
      timestamp: 1676983215610n,
      contractType: 1,
      contractCount: 1,
    });
    expect(r.typeUrl).toBe('type.googleapis.com/protocol.TransferContract');
    expect(txIdOf(TP_RAW)).toBe(sha256(`0x${TP_RAW}`).slice(2));
  });

  it('round-trips a TriggerSmartContract and a signed transaction', () => {
    const fields = {
      refBlockBytes: '1a2b',
      refBlockHash: '0011223344556677',
      expiration: 1_700_000_060_000n,
      timestamp: 1_700_000_000_123n,
      feeLimit: 7_800_000n,
      owner: '41' + '11'.repeat(20),
      contract: '41a614f803b6fd780986a42c78ec9c7f77e6ded13c',
      callValue: 0n,
      data: 'a9059cbb' + '00'.repeat(64),
    };
    const raw = encodeTriggerRawData(fields);
    expect(decodeTriggerRawData(raw)).toEqual({
      ...fields,
      contractType: 31,
      typeUrl: 'type.googleapis.com/protocol.TriggerSmartContract',
      contractCount: 1,
    });
    const sig = 'ab'.repeat(64) + '1c';
    expect(decodeSignedTransaction(encodeSignedTransaction(raw, [sig]))).toEqual({ rawDataHex: raw, signatures: [sig] });
    expect(() => decodeTriggerRawData(raw.slice(0, 20))).toThrow();
  });
});

describe('TRON results to failure reasons', () => {
  it('only SUCCESS succeeds; OUT_OF_ENERGY and REVERT have their own reasons; every enum value is mapped', () => {
    expect(classifyContractResult('SUCCESS')).toBeNull();
    expect(classifyContractResult('OUT_OF_ENERGY')).toMatchObject({ reason: 'out_of_energy', detail: expect.stringMatching(/energy/) });
    expect(classifyContractResult('REVERT')).toMatchObject({ reason: 'reverted' });
    for (const r of CONTRACT_RESULTS) if (r !== 'SUCCESS') expect(classifyContractResult(r)?.reason).toMatch(/reverted|out_of_energy/);
    expect(parseContractResult('SOMETHING_NEW')).toBe('UNKNOWN');
    expect(parseContractResult(undefined)).toBe('UNKNOWN');
  });

  it('broadcast codes: duplicate is already known, busy nodes are retried, the rest are refusals with a reason', () => {
    expect(classifyBroadcast('DUP_TRANSACTION_ERROR', '')).toEqual({ kind: 'duplicate' });
    expect(classifyBroadcast('SERVER_BUSY', '')).toEqual({ kind: 'retry' });
    expect(classifyBroadcast('TRANSACTION_EXPIRATION_ERROR', '')).toEqual({ kind: 'rejected', reason: 'expired' });
    expect(classifyBroadcast('BANDWITH_ERROR', 'Account resource insufficient error.')).toEqual({
      kind: 'rejected',
      reason: 'insufficient_gas',
    });
    expect(classifyBroadcast('CONTRACT_VALIDATE_ERROR', 'Validate TransferContract error, balance is not sufficient.')).toEqual({
      kind: 'rejected',
      reason: 'insufficient_gas',
    });
    expect(classifyBroadcast('SIGERROR', '')).toEqual({ kind: 'rejected', reason: 'invalid' });
    expect(classifyBroadcast('WHATEVER', '')).toEqual({ kind: 'rejected', reason: 'other' });
  });

  it('node messages are hex-encoded UTF-8; int64 never passes an unsafe number', () => {
    expect(decodeNodeMessage(Buffer.from('REVERT opcode executed').toString('hex'))).toBe('REVERT opcode executed');
    expect(decodeNodeMessage('plain text')).toBe('plain text');
    expect(int64(27255900)).toBe(27255900n);
    expect(int64('100000000000000000001')).toBe(100000000000000000001n);
    expect(int64(undefined)).toBe(0n);
    expect(() => int64(2 ** 60)).toThrow(/2\^53/);
  });
});

describe('costs', () => {
  const prices = { energySun: 100n, bandwidthSun: 1000n };
  const none = {
    energy: { limit: 0n, used: 0n, available: 0n },
    bandwidth: { freeLimit: 600n, freeUsed: 600n, stakedLimit: 0n, stakedUsed: 0n, available: 0n },
  };
  it('a USDT refund with no resources burns energy and the whole bandwidth; staking removes both', () => {
    expect(trxNeededFor({ energy: 64_285n, bandwidthBytes: 345n }, none, prices)).toBe(6_428_500n + 345_000n);
    expect(
      trxNeededFor({ energy: 130_285n, bandwidthBytes: 345n }, { ...none, bandwidth: { ...none.bandwidth, freeUsed: 0n } }, prices),
    ).toBe(13_028_500n);
    const staked = {
      energy: { limit: 200_000n, used: 0n, available: 200_000n },
      bandwidth: { freeLimit: 600n, freeUsed: 300n, stakedLimit: 0n, stakedUsed: 0n, available: 300n },
    };
    expect(trxNeededFor({ energy: 64_285n, bandwidthBytes: 345n }, staked, prices)).toBe(345_000n); // 300 free bytes left < 345: bandwidth is never split
  });
});

describe('payment links for the hosted page', () => {
  const req = {
    address: '41a614f803b6fd780986a42c78ec9c7f77e6ded13c',
    tokenContract: '41a614f803b6fd780986a42c78ec9c7f77e6ded13c',
    amount: 12_500_000n,
    decimals: 6,
  };
  it('QR and copy text are the bare base58 address; tron: link without amount by default', () => {
    expect(tronPaymentLinks(req)).toEqual({
      address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
      amount: '12.5',
      tokenContract: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
      uri: 'tron:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
    });
    expect(tronPaymentLinks(req, { withAmount: true }).uri).toBe(
      'tron:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t?amount=12.5&token=TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
    );
    expect(formatTokenAmount(1n, 6)).toBe('0.000001');
    expect(formatTokenAmount(10_000_000n, 6)).toBe('10');
  });
});

describe('TRON settings from the environment', () => {
  it('defaults, TronGrid host derivation, validation without echoing secrets', () => {
    const s = loadTronExtraSettings({ CHAIN_TRON_LIVE_API_KEY: 'secret-key' }, 'live', 'https://api.trongrid.io/jsonrpc');
    expect(s).toEqual({
      fullHost: 'https://api.trongrid.io',
      solidityHost: undefined,
      apiKey: 'secret-key',
      feeLimitCeilingSun: 50_000_000n,
      energyMarginPercent: 20,
    });
    expect(
      loadTronExtraSettings(
        {
          CHAIN_TRON_TEST_FULL_HOST: 'http://127.0.0.1:8090/',
          CHAIN_TRON_TEST_SOLIDITY_HOST: 'http://127.0.0.1:8091',
          CHAIN_TRON_TEST_FEE_LIMIT_CEILING_SUN: '30000000',
          CHAIN_TRON_TEST_ENERGY_MARGIN_PERCENT: '10',
        },
        'test',
        'http://127.0.0.1:8545/jsonrpc',
      ),
    ).toEqual({
      fullHost: 'http://127.0.0.1:8090',
      solidityHost: 'http://127.0.0.1:8091',
      apiKey: undefined,
      feeLimitCeilingSun: 30_000_000n,
      energyMarginPercent: 10,
    });
    expect(loadTronExtraSettings({}, 'test', 'http://127.0.0.1:8545').fullHost).toBeUndefined();
    expect(() => loadTronExtraSettings({ CHAIN_TRON_TEST_FEE_LIMIT_CEILING_SUN: '1e9' }, 'test')).toThrow(
      /^CHAIN_TRON_TEST_FEE_LIMIT_CEILING_SUN must be an integer/,
    );
    expect(() => loadTronExtraSettings({ CHAIN_TRON_TEST_FULL_HOST: 'ftp://x' }, 'test')).toThrow(/FULL_HOST must be an http/);
  });
});
