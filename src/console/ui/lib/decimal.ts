// Exact sums of decimal strings (the API's money) with bigint: never a JS number for money.
function split(v: string): [bigint, number] {
  const neg = v.startsWith('-');
  const [int = '0', frac = ''] = (neg ? v.slice(1) : v).split('.');
  const n = BigInt(`${int}${frac}` || '0');
  return [neg ? -n : n, frac.length];
}

export function addDecimal(a: string, b: string): string {
  const [x, sx] = split(a);
  const [y, sy] = split(b);
  const scale = Math.max(sx, sy);
  const sum = x * 10n ** BigInt(scale - sx) + y * 10n ** BigInt(scale - sy);
  return fromScaled(sum, scale);
}

function fromScaled(n: bigint, scale: number): string {
  const neg = n < 0n;
  const digits = (neg ? -n : n).toString().padStart(scale + 1, '0');
  const int = digits.slice(0, digits.length - scale);
  const frac = scale ? digits.slice(-scale).replace(/0+$/, '') : '';
  return `${neg ? '-' : ''}${int}${frac ? `.${frac}` : ''}`;
}

/** Bar height only (display geometry), never for arithmetic on money. */
export function magnitude(v: string): number {
  return Number.parseFloat(v) || 0;
}
