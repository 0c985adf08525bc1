// Tether's fee on transfers (`basisPointsRate`, `maximumFee`; on Ethereum and TRON): fee = min(value * bps / 10000,
// maximumFee), rounded down; the recipient gets value - fee. All in base units, bigint only.

export interface TransferFee {
  basisPoints: bigint;
  maximumFee: bigint;
}

export function netOf(gross: bigint, fee: TransferFee): bigint {
  const proportional = (gross * fee.basisPoints) / 10_000n;
  return gross - (proportional < fee.maximumFee ? proportional : fee.maximumFee);
}

/**
 * The smallest gross whose net is exactly `net`. Net grows by 0 or 1 per base unit of gross (bps ≤ 10000), so the first
 * gross reaching `net` lands on it; it lies in [net, net + maximumFee], searched by bisection. Null when no gross can
 * deliver `net` (a rate of 100 % or more).
 */
export function grossForNet(net: bigint, fee: TransferFee): bigint | null {
  if (fee.basisPoints === 0n || fee.maximumFee === 0n || net <= 0n) return net;
  if (fee.basisPoints >= 10_000n) return null;
  let lo = net;
  let hi = net + fee.maximumFee;
  while (lo < hi) {
    const mid = (lo + hi) / 2n;
    if (netOf(mid, fee) >= net) hi = mid;
    else lo = mid + 1n;
  }
  return netOf(lo, fee) === net ? lo : null;
}
