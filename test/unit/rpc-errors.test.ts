import { describe, expect, it } from 'vitest';
import { classifyRpcError, rpcErrorOf } from '../../chains/evm/rpc-errors.js';
import { endpointFault } from '../../chains/evm/failover-rpc.js';

// eth_getLogs refusals as the big providers and node software word them (chains/evm/rpc-errors.ts lists the sources):
// each is a range to shrink (never a fault of the endpoint, never a rate limit), with the provider's suggested upper
// block kept when it names one. Rate limits stay rate limits.

const RANGE: Array<[provider: string, code: number, message: string, suggested: bigint | null]> = [
  [
    'Alchemy, response size',
    -32602,
    'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x6f8a4b, 0x6f8f0e]',
    0x6f8f0en,
  ],
  [
    'Alchemy, plan block cap',
    -32600,
    'You can make eth_getLogs requests with up to a 500 block range. Based on your parameters, this block range should work: [0x123c9b2, 0x123cba5]',
    0x123cba5n,
  ],
  ['Infura, results', -32005, 'query returned more than 10000 results. Try with this block range [0x10, 0x1f].', 0x1fn],
  ['Infura, blocks', -32602, 'range 1000000 exceeds limit of 10000', null],
  ['QuickNode', -32614, 'eth_getLogs is limited to a 10,000 range', null],
  ['QuickNode, older wording', -32602, 'eth_getLogs and eth_newFilter are limited to a 10,000 blocks range', null],
  ['Ankr / public nodes', -32000, 'block range is too wide', null],
  ['public nodes', -32600, 'block range too high', null],
  ['public gateway (Reth defaults behind it)', -32600, 'Query exceeds max block range of 10000', null],
  ['Bor / BSC', -32000, 'exceed maximum block range: 5000', null],
  ['geth fork', -32000, 'block range is larger than max block range, block range = 5120, max block range = 5000', null],
  ['Reth (Base), blocks', -32602, 'query exceeds max block range 100000', null],
  ['Reth (Base), results', -32602, 'query exceeds max results 20000, retry with the range 25766988-25775072', 25775072n],
  ['Erigon-style gateway', -32000, 'requested too many blocks from 0 to 16777215, maximum is set to 2048', null],
  ['response size', -32000, 'response size should not greater than 10000000 bytes', null],
];

describe('eth_getLogs range refusals', () => {
  for (const [provider, code, message, suggested] of RANGE) {
    it(`${provider}: "${message.slice(0, 60)}…" is a range to shrink`, () => {
      const e = classifyRpcError(code, message, 'eth_getLogs');
      expect(e.kind).toBe('range_too_large');
      expect(e.suggestedToBlock).toBe(suggested);
      expect(endpointFault(e)).toBeNull();
    });
  }

  it('Tenderly: the detail in `data` makes "invalid params" a range refusal; a revert data stays a revert', () => {
    const e = rpcErrorOf(
      { code: -32602, message: 'invalid params', data: { error_id: 'x', payload: 'range 9009594 is bigger than range limit 2000' } },
      'eth_getLogs',
    );
    expect(e.kind).toBe('range_too_large');
    expect(e.message).toContain('range limit 2000');
    const revert = rpcErrorOf({ code: 3, message: 'execution reverted', data: '0x08c379a0' }, 'eth_call');
    expect(revert.kind).toBe('rpc_error');
    expect(revert.message).toBe('execution reverted');
  });

  it('-32005 "limit exceeded" alone: the cap of eth_getLogs on blocks or results, a rate limit on any other method', () => {
    expect(classifyRpcError(-32005, 'limit exceeded', 'eth_getLogs').kind).toBe('range_too_large');
    expect(classifyRpcError(-32005, 'limit exceeded', 'eth_call').kind).toBe('rate_limited');
    expect(classifyRpcError(-32005, 'limit exceeded').kind).toBe('rate_limited');
  });

  it('rate limits stay rate limits, on eth_getLogs too', () => {
    for (const m of ['daily request count exceeded, request rate limited', 'project ID request rate exceeded', 'Too Many Requests'])
      expect(classifyRpcError(-32005, m, 'eth_getLogs').kind).toBe('rate_limited');
    expect(classifyRpcError(429, 'exceeded its compute units per second capacity', 'eth_getLogs').kind).toBe('rate_limited');
    expect(classifyRpcError(-32000, 'execution reverted', 'eth_call').kind).toBe('rpc_error');
  });
});
