import { describe, expect, it } from 'vitest';
import { minorUnitInBase, settlesAsPaid } from '../../src/domain/settlement-rule.js';

// The paid rule of confirmed credits (issue 13, item 19), against its definition: exact bigint arithmetic only.
describe('settlesAsPaid', () => {
  it('one API minor unit is 0.01 of the token in base units', () => {
    expect([minorUnitInBase(6), minorUnitInBase(18), minorUnitInBase(2), minorUnitInBase(0)]).toEqual([10_000n, 10n ** 16n, 1n, 1n]);
  });

  it('settles a remainder strictly below one minor unit, never one of a whole minor unit', () => {
    expect(settlesAsPaid(100_000_000n, 99_990_001n, 6, 0)).toBe(true); // 0.009999 short
    expect(settlesAsPaid(100_000_000n, 99_990_000n, 6, 0)).toBe(false); // 0.01 short
    expect(settlesAsPaid(10n ** 19n, 10n ** 19n - 10n ** 16n + 1n, 18, 0)).toBe(true);
    expect(settlesAsPaid(10n ** 19n, 10n ** 19n - 10n ** 16n, 18, 0)).toBe(false);
    expect(settlesAsPaid(100n, 99n, 2, 0)).toBe(false); // 2-decimal token: no dust exists
  });

  it('tolerance never accepts more shortfall than bps of the amount due (rounding against the payer)', () => {
    // 2-decimal token, due 101, 50 bps: 101 × 0.995 = 100.495, so 100 (short by 1 > 0.505) is refused.
    expect(settlesAsPaid(101n, 100n, 2, 50)).toBe(false);
    expect(settlesAsPaid(101n, 101n, 2, 50)).toBe(true);
    // due 1000, 50 bps: exactly 995 accepted, 994 refused.
    expect(settlesAsPaid(1000n, 995n, 2, 50)).toBe(true);
    expect(settlesAsPaid(1000n, 994n, 2, 50)).toBe(false);
    for (let due = 1n; due < 400n; due += 7n) {
      for (const bps of [1, 33, 50, 999, 2500]) {
        for (let received = 1n; received < due; received++) {
          const accepted = settlesAsPaid(due, received, 2, bps);
          // accepted ⟺ shortfall ≤ due × bps / 10000 (as a fraction, no rounding)
          expect(accepted).toBe((due - received) * 10_000n <= due * BigInt(bps));
        }
      }
    }
  });

  it('nothing received never settles, even at 100 % tolerance; 0 bps is strict', () => {
    expect(settlesAsPaid(1000n, 0n, 6, 10_000)).toBe(false);
    expect(settlesAsPaid(1000n, 1n, 6, 10_000)).toBe(true);
    expect(settlesAsPaid(100_000_000n, 99_000_000n, 6, 0)).toBe(false);
  });
});
