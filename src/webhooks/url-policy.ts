import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

// Endpoint rules (decisions.md, Webhooks). Live mode: https only, and every address the host resolves to must be a
// public unicast address. Test mode: http allowed; private, loopback and link-local targets allowed when the
// operator permits it (WEBHOOK_ALLOW_PRIVATE_TARGETS_IN_TEST). Checked when a URL is configured and again before
// each attempt; the attempt then connects to an address from that same check, so a DNS answer that changes
// between check and connect (rebinding) cannot reach a refused address.

export type TargetMode = 'test' | 'live';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export type TargetCheck = { ok: true; url: URL; addresses: ResolvedAddress[] } | { ok: false; reason: string };

const refusedV4 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  refusedV4.addSubnet(net, bits, 'ipv4');

const refusedV6 = new BlockList();
for (const [net, bits] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['::', 96], // IPv4-compatible (deprecated)
  ['64:ff9b::', 32], // NAT64 space outside the well-known /96 (judged by its IPv4 before this list is consulted)
  ['64:ff9b:1::', 48], // NAT64 local-use (RFC 8215): where the IPv4 sits depends on the site's prefix length
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['2001::', 32], // Teredo
  ['fc00::', 7], // unique local (private)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const)
  refusedV6.addSubnet(net, bits, 'ipv6');

/**
 * IPv4 address embedded in an IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96), NAT64 well-known
 * (64:ff9b::/96) or 6to4 (2002::/16) IPv6 address: a connection to it reaches that IPv4 host (or its network), so it is
 * judged by that IPv4 address. The other forms that embed one (IPv4-compatible ::/96, Teredo 2001::/32, NAT64
 * local-use 64:ff9b:1::/48) are refused outright by `refusedV6`.
 */
function embeddedV4(v6: string): string | undefined {
  const words = expandV6(v6);
  if (!words) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zero = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  if (zero(0, 5) && words[5] === 0xffff) return v4(words[6]!, words[7]!); // ::ffff:a.b.c.d
  if (zero(0, 4) && words[4] === 0xffff && words[5] === 0) return v4(words[6]!, words[7]!); // ::ffff:0:a.b.c.d
  if (words[0] === 0x64 && words[1] === 0xff9b && zero(2, 6)) return v4(words[6]!, words[7]!); // 64:ff9b::/96
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!); // 2002:AABB:CCDD::/48
  return undefined;
}

function expandV6(v6: string): number[] | undefined {
  let s = v6.toLowerCase().split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    const p = dotted[1]!.split('.').map(Number);
    s = s.slice(0, -dotted[1]!.length) + `${((p[0]! << 8) | p[1]!).toString(16)}:${((p[2]! << 8) | p[3]!).toString(16)}`;
  }
  const [head, tail] = s.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail === undefined ? 0 : 8 - h.length - t.length;
  const words = [...h, ...Array<string>(Math.max(fill, 0)).fill('0'), ...t].map((w) => parseInt(w, 16));
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : undefined;
}

/** True for addresses a live webhook may never reach: private, loopback, link-local, and other non-public ranges. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return refusedV4.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedV4(address);
    if (v4 !== undefined) return refusedV4.check(v4, 'ipv4');
    return refusedV6.check(address, 'ipv6');
  }
  return true; // not an address at all
}

export interface TargetPolicy {
  allowPrivateTargetsInTest: boolean;
  resolve?: Resolver;
}

/** Syntax and scheme rules, without DNS. */
export function checkUrlSyntax(raw: string, mode: TargetMode): { ok: true; url: URL } | { ok: false; reason: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'not an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: 'scheme must be https' };
  if (mode === 'live' && url.protocol !== 'https:') return { ok: false, reason: 'live mode requires https' };
  if (url.username || url.password) return { ok: false, reason: 'credentials in the URL are not allowed' };
  if (!url.hostname) return { ok: false, reason: 'no host' };
  url.hash = '';
  return { ok: true, url };
}

/**
 * The check without DNS: syntax, and the address rules when the host is an IP literal. A host name passes with no
 * `addresses` (`resolved: false`); the check before each attempt resolves it then.
 */
export function checkWebhookTargetWithoutDns(
  raw: string,
  mode: TargetMode,
  policy: TargetPolicy,
): { ok: true; url: URL; resolved: boolean } | { ok: false; reason: string } {
  const syntax = checkUrlSyntax(raw, mode);
  if (!syntax.ok) return syntax;
  const host = syntax.url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!isIP(host)) return { ok: true, url: syntax.url, resolved: false };
  const privateAllowed = mode === 'test' && policy.allowPrivateTargetsInTest;
  if (!privateAllowed && isNonPublicAddress(host)) return { ok: false, reason: `host resolves to a non-public address (${host})` };
  return { ok: true, url: syntax.url, resolved: true };
}

/** Full check: syntax, then every resolved address. On success, `addresses` are the ones an attempt may use. */
export async function checkWebhookTarget(raw: string, mode: TargetMode, policy: TargetPolicy): Promise<TargetCheck> {
  const syntax = checkUrlSyntax(raw, mode);
  if (!syntax.ok) return syntax;
  const host = syntax.url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: ResolvedAddress[];
  const literal = isIP(host);
  if (literal) addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  else {
    try {
      addresses = await (policy.resolve ?? systemResolver)(host);
    } catch (err) {
      return { ok: false, reason: `host does not resolve (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
    }
  }
  if (addresses.length === 0) return { ok: false, reason: 'host does not resolve' };
  const privateAllowed = mode === 'test' && policy.allowPrivateTargetsInTest;
  if (!privateAllowed) {
    const bad = addresses.find((a) => isNonPublicAddress(a.address));
    if (bad) return { ok: false, reason: `host resolves to a non-public address (${bad.address})` };
  }
  return { ok: true, url: syntax.url, addresses };
}

/** The URL as logs and the delivery log show it: no credentials, query values hidden. */
export function redactUrl(raw: string): string {
  try {
    const u = new URL(raw);
    u.username = '';
    u.password = '';
    u.hash = '';
    for (const k of [...u.searchParams.keys()]) u.searchParams.set(k, '***');
    return u.toString();
  } catch {
    return '(invalid url)';
  }
}
