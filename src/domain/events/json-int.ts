// int64 fields travel as JSON numbers. Minor units and Unix seconds stay far below 2^53; anything that does not is
// refused here rather than rounded silently.
export function jsonInt(v: bigint | number, field: string): number {
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (!Number.isSafeInteger(n) || (typeof v === 'bigint' && BigInt(n) !== v)) throw new RangeError(`${field} is not a safe integer`);
  return n;
}

export function unixSeconds(d: Date): number {
  return Math.floor(d.getTime() / 1000);
}
