import { describe, expect, it } from 'vitest';
import { MAINNET_TOKENS, resolveTokens } from '../../chains/tokens/registry.js';
import { classifyRpcError } from '../../chains/evm/rpc-errors.js';
import { decodeTransferLog, TRANSFER_TOPIC } from '../../chains/evm/transfer-log.js';
import { normalizeEvmAddress } from '../../chains/evm/address.js';

describe('token registry', () => {
  it('mainnet contracts and decimals from the issue', () => {
    expect(MAINNET_TOKENS.ethereum).toEqual([
      { symbol: 'USDT', address: '0xdAC17F958D2ee523a2206206994597C13D831ec7', decimals: 6 },
      { symbol: 'USDC', address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', decimals: 6 },
    ]);
    expect(MAINNET_TOKENS.bsc.map((t) => [t.symbol, t.address, t.decimals])).toEqual([
      ['USDT', '0x55d398326f99059fF775485246999027B3197955', 18],
      ['USDC', '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d', 18],
    ]);
    for (const t of [...MAINNET_TOKENS.ethereum, ...MAINNET_TOKENS.bsc]) expect(normalizeEvmAddress(t.address)).not.toBeNull();
  });

  it('live defaults to mainnet; test mode only from configuration; configuration overrides by symbol', () => {
    expect(resolveTokens('bsc', 'live', [])).toHaveLength(2);
    expect(resolveTokens('ethereum', 'test', [])).toEqual([]);
    const local = { symbol: 'USDT' as const, address: '0x5FbDB2315678afecb367f032d93F642f64180aa3', decimals: 6 };
    expect(resolveTokens('ethereum', 'test', [local])).toEqual([local]);
    expect(resolveTokens('ethereum', 'live', [local]).find((t) => t.symbol === 'USDT')).toEqual(local);
    expect(() => resolveTokens('ethereum', 'test', [{ ...local, decimals: 1 }])).toThrow();
  });
});

describe('EVM primitives', () => {
  it('classifies provider range errors and keeps the suggested range', () => {
    const e = classifyRpcError(-32005, 'query returned more than 10000 results. Try with this block range [0x10, 0x1f].');
    expect(e.kind).toBe('range_too_large');
    expect(e.suggestedToBlock).toBe(0x1fn);
    expect(classifyRpcError(-32000, 'block range is too wide').kind).toBe('range_too_large');
    expect(classifyRpcError(-32600, 'exceed maximum block range: 5000').kind).toBe('range_too_large');
    expect(classifyRpcError(-32005, 'daily request count exceeded, request rate limited').kind).toBe('rate_limited');
    expect(classifyRpcError(-32000, 'execution reverted').kind).toBe('rpc_error');
  });

  it('decodes standard Transfer logs and rejects other shapes', () => {
    const to = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
    const log = {
      address: '0xAA00000000000000000000000000000000000001',
      topics: [TRANSFER_TOPIC, `0x${'0'.repeat(24)}f39fd6e51aad88f6f4ce6ab8827279cfffb92266`, `0x${'0'.repeat(24)}${to.slice(2)}`],
      data: `0x${(10n ** 18n).toString(16).padStart(64, '0')}`,
      blockNumber: '0x10',
      blockHash: `0x${'ab'.repeat(32)}`,
      transactionHash: `0x${'cd'.repeat(32)}`,
      logIndex: '0x3',
    };
    expect(decodeTransferLog(log)).toMatchObject({
      to,
      amount: 10n ** 18n,
      logIndex: 3,
      blockNumber: 16n,
      token: log.address.toLowerCase(),
    });
    expect(decodeTransferLog({ ...log, removed: true })).toBeNull();
    expect(decodeTransferLog({ ...log, topics: log.topics.slice(0, 1) })).toBeNull();
    expect(decodeTransferLog({ ...log, data: '0x' })).toBeNull();
  });

  it('normalises addresses and refuses a bad checksum', () => {
    expect(normalizeEvmAddress('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266')).toBe('0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266');
    expect(normalizeEvmAddress('0xF39Fd6e51aad88F6F4ce6aB8827279cffFb92266')).toBeNull();
    expect(normalizeEvmAddress('0x1234')).toBeNull();
  });
});
