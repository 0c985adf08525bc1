import { describe, expect, it } from 'vitest';
import { grossForNet, netOf } from '../../chains/tokens/transfer-fee.js';

// Tether's fee on transfers, grossed up in bigint: the smallest gross whose net is exactly the refund amount.
describe('grossForNet', () => {
  it('matches a brute-force search over small rates, caps and amounts', () => {
    for (const basisPoints of [0n, 1n, 7n, 10n, 19n, 250n, 3333n, 9000n]) {
      for (const maximumFee of [0n, 1n, 3n, 50n, 10n ** 30n]) {
        const fee = { basisPoints, maximumFee };
        for (let net = 1n; net <= 400n; net += 13n) {
          let g = net;
          while (netOf(g, fee) < net) g++;
          expect(grossForNet(net, fee)).toBe(g);
          expect(netOf(g, fee)).toBe(net);
        }
      }
    }
  });

  it('grosses up 5.00 USDT at 0.1 % to 5.005005, and at a 2000 base-unit cap to 5.002000', () => {
    expect(grossForNet(5_000_000n, { basisPoints: 10n, maximumFee: 1_000_000n })).toBe(5_005_005n);
    expect(grossForNet(5_000_000n, { basisPoints: 10n, maximumFee: 2000n })).toBe(5_002_000n);
    expect(grossForNet(10n ** 30n, { basisPoints: 19n, maximumFee: 50n * 10n ** 18n })).toBe(10n ** 30n + 50n * 10n ** 18n);
  });

  it('answers null when no amount can deliver the net (a rate of 100 %)', () => {
    expect(grossForNet(100n, { basisPoints: 10_000n, maximumFee: 10n ** 30n })).toBeNull();
  });
});
