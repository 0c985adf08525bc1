import { STABLECOIN_EXPONENT } from '../../chains/vocabulary.js';

// When confirmed credits settle a session as paid (issue 13, item 19). All amounts are token base units (bigint).
// - in full: received >= due;
// - sub-unit dust: what remains is below one minor unit of the API's precision (0.01 of the token, decisions.md
//   Money), which the page cannot even ask for; a fee taken in transit leaves such dust behind;
// - the merchant's underpayment tolerance: received >= due × (10000 − bps) / 10000, compared exactly
//   (received × 10000 >= due × (10000 − bps)), so the accepted shortfall never exceeds bps of the amount due.
// Nothing received never settles, whatever the tolerance.

/** Base units of one API minor unit (0.01 of the token); 1 for a token with fewer than 2 decimals. */
export function minorUnitInBase(tokenDecimals: number): bigint {
  return tokenDecimals >= STABLECOIN_EXPONENT ? 10n ** BigInt(tokenDecimals - STABLECOIN_EXPONENT) : 1n;
}

export function settlesAsPaid(due: bigint, received: bigint, tokenDecimals: number, toleranceBps: number): boolean {
  if (received >= due) return true;
  if (received <= 0n) return false;
  if (due - received < minorUnitInBase(tokenDecimals)) return true;
  const bps = BigInt(Math.min(10_000, Math.max(0, Math.trunc(toleranceBps))));
  return received * 10_000n >= due * (10_000n - bps);
}
