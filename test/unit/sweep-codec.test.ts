import { describe, expect, it } from 'vitest';
import type { SweepRequest } from '../../chains/types.js';
import { requestFromJson, requestToJson } from '../../src/treasury/codec.js';

// A sweep is rebuilt from its stored request after any crash: the round trip must be exact, the destinations the
// EIP-7702 delegate is bound to included (docs/treasury-evm-7702.md, Deployment).
describe('sweep request codec', () => {
  const base: SweepRequest = {
    token: 'USDT',
    destination: '0x000000000000000000000000000000000000beef',
    gasStation: { key: { curve: 'secp256k1', path: "m/44'/60'/0'/1/0" }, address: '0x00000000000000000000000000000000000000aa' },
    sources: [
      {
        key: { curve: 'secp256k1', path: "m/44'/60'/1'/0/7" },
        address: '0x00000000000000000000000000000000000000bb',
        amount: 12_345_678_901_234_567_890n,
      },
    ],
  };

  it('round-trips a request with the merchant destinations, through JSON text', () => {
    const r: SweepRequest = {
      ...base,
      destinations: ['0x000000000000000000000000000000000000beef', '0x000000000000000000000000000000000000cafe'],
    };
    expect(requestFromJson(JSON.parse(JSON.stringify(requestToJson(r))))).toEqual(r);
  });

  it('round-trips a request without destinations (other families, older sweeps) without adding the field', () => {
    const back = requestFromJson(JSON.parse(JSON.stringify(requestToJson(base))));
    expect(back).toEqual(base);
    expect('destinations' in back).toBe(false);
  });
});
