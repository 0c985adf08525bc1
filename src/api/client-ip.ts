import { isIPv4, isIPv6 } from 'node:net';

/**
 * The unit a per-IP limit counts: an IPv4 address, or the /64 network of an IPv6 address (the smallest block one
 * subscriber usually holds, so hopping between its addresses does not escape the limit). IPv4-mapped IPv6 addresses
 * count as their IPv4 address. Anything else (a unix socket) counts as given.
 */
export function clientIpBucket(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (isIPv4(ip)) return ip;
  const address = ip.split('%')[0]!;
  if (!isIPv6(address)) return ip;
  const groups = (part: string) => (part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])));
  const [head = '', tail] = address.split('::') as [string, string | undefined];
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${all
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
