import { describe, expect, it } from 'vitest';
import {
  checkWebhookTarget,
  checkWebhookTargetWithoutDns,
  isNonPublicAddress,
  redactUrl,
  type Resolver,
} from '../../src/webhooks/url-policy.js';

const dns: Resolver = async (host) => {
  const table: Record<string, string[]> = {
    'internal.example': ['10.0.0.1'],
    'public.example': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'sneaky.example': ['93.184.216.34', '169.254.169.254'],
    'mapped.example': ['::ffff:127.0.0.1'],
    'translated.example': ['::ffff:0:10.0.0.1'],
    'nat64.example': ['64:ff9b::a9fe:a9fe'],
    'nat64-local.example': ['64:ff9b:1:808:800::1'],
    'sixtofour.example': ['2002:c0a8:0101::1'],
    'teredo.example': ['2001:0:4136:e378:8000:63bf:3fff:fdd2'],
    'compat.example': ['::10.0.0.1'],
    'translated-public.example': ['::ffff:0:8.8.8.8'],
    localhost: ['127.0.0.1', '::1'],
  };
  const a = table[host];
  if (!a) throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' });
  return a.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
};
const live = (u: string) => checkWebhookTarget(u, 'live', { allowPrivateTargetsInTest: true, resolve: dns });
const test = (u: string, allow = true) => checkWebhookTarget(u, 'test', { allowPrivateTargetsInTest: allow, resolve: dns });

describe('live-mode endpoint rules', () => {
  it('refuses http://', async () => {
    expect(await live('http://public.example/hook')).toEqual({ ok: false, reason: 'live mode requires https' });
  });
  it('refuses https://127.0.0.1 and other literal non-public addresses', async () => {
    for (const u of [
      'https://127.0.0.1/h',
      'https://[::1]/h',
      'https://10.1.2.3/',
      'https://169.254.169.254/latest',
      'https://0.0.0.0/',
      'https://2130706433/',
      'https://[::ffff:10.0.0.1]/',
    ]) {
      const r = await live(u);
      expect(r.ok, u).toBe(false);
      expect(r.ok ? '' : r.reason, u).toMatch(/non-public address/);
    }
  });
  it('refuses a host resolving to 10.0.0.1, or to any non-public address among public ones', async () => {
    expect(await live('https://internal.example/h')).toEqual({ ok: false, reason: 'host resolves to a non-public address (10.0.0.1)' });
    expect(await live('https://sneaky.example/h')).toEqual({
      ok: false,
      reason: 'host resolves to a non-public address (169.254.169.254)',
    });
    expect(await live('https://mapped.example/h')).toMatchObject({ ok: false });
    expect(await live('https://localhost/h')).toMatchObject({ ok: false });
  });
  it('accepts https to a host whose every address is public, and returns those addresses for the connection', async () => {
    const r = await live('https://public.example/hook?x=1#frag');
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.url.toString()).toBe('https://public.example/hook?x=1');
      expect(r.addresses.map((a) => a.address)).toEqual(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']);
    }
  });
  it('refuses garbage, other schemes, credentials and unresolvable hosts', async () => {
    expect(await live('not a url')).toMatchObject({ ok: false, reason: 'not an absolute URL' });
    expect(await live('ftp://public.example/')).toMatchObject({ ok: false });
    expect(await live('https://user:pw@public.example/')).toMatchObject({ ok: false, reason: 'credentials in the URL are not allowed' });
    expect(await live('https://nx.example/')).toMatchObject({ ok: false, reason: 'host does not resolve (ENOTFOUND)' });
  });
});

describe('test-mode endpoint rules', () => {
  it('allows http and loopback when private targets are allowed in test', async () => {
    expect((await test('http://127.0.0.1:8080/h')).ok).toBe(true);
    expect((await test('http://localhost/h')).ok).toBe(true);
  });
  it('still refuses non-public targets in test mode when the operator forbids them', async () => {
    expect(await test('http://127.0.0.1:8080/h', false)).toMatchObject({ ok: false });
    expect((await test('http://public.example/h', false)).ok).toBe(true);
  });
});

describe('address classification', () => {
  it('classifies private, loopback, link-local and reserved ranges as non-public', () => {
    for (const a of [
      '10.0.0.1',
      '172.16.5.4',
      '172.31.255.255',
      '192.168.0.1',
      '127.0.0.1',
      '169.254.1.1',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:192.168.1.1',
      '64:ff9b::a00:1',
      '2002:0a00:0001::1',
      'not-an-ip',
    ])
      expect(isNonPublicAddress(a), a).toBe(true);
  });
  it('classifies public addresses as public', () => {
    for (const a of [
      '93.184.216.34',
      '8.8.8.8',
      '172.32.0.1',
      '100.128.0.1',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
      '2002:0808:0808::1',
    ])
      expect(isNonPublicAddress(a), a).toBe(false);
  });
});

// Every IPv6 form that embeds an IPv4 address: judged by that address (mapped, translated, NAT64 well-known, 6to4),
// or refused whatever it embeds (IPv4-compatible, Teredo, NAT64 local-use, the rest of 64:ff9b::/32).
describe('IPv6 forms embedding an IPv4 address', () => {
  const judged: Array<[string, string[], string[]]> = [
    ['IPv4-mapped ::ffff:0:0/96', ['::ffff:10.0.0.1', '::ffff:a9fe:a9fe', '::ffff:127.0.0.1'], ['::ffff:8.8.8.8', '::ffff:5db8:d822']],
    [
      'IPv4-translated ::ffff:0:0:0/96',
      ['::ffff:0:10.0.0.1', '::ffff:0:a9fe:a9fe', '::ffff:0:7f00:1', '0:0:0:0:ffff:0:c0a8:101'],
      ['::ffff:0:8.8.8.8', '::ffff:0:5db8:d822'],
    ],
    [
      'NAT64 well-known 64:ff9b::/96',
      ['64:ff9b::10.0.0.1', '64:ff9b::a9fe:a9fe', '64:ff9b::7f00:1'],
      ['64:ff9b::8.8.8.8', '64:ff9b::5db8:d822'],
    ],
    ['6to4 2002::/16', ['2002:0a00:0001::1', '2002:a9fe:a9fe::1', '2002:7f00:0001:1::1'], ['2002:0808:0808::1', '2002:5db8:d822::1']],
  ];
  for (const [range, refused, accepted] of judged) {
    it(`${range}: refused when the embedded IPv4 is non-public, public when it is`, () => {
      for (const a of refused) expect(isNonPublicAddress(a), a).toBe(true);
      for (const a of accepted) expect(isNonPublicAddress(a), a).toBe(false);
    });
  }
  const refusedOutright: Array<[string, string[]]> = [
    [
      'NAT64 local-use 64:ff9b:1::/48',
      ['64:ff9b:1::808:808', '64:ff9b:1:808:800::1', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff', '64:ff9b:1::a00:1'],
    ],
    ['the rest of 64:ff9b::/32', ['64:ff9b:0:1::808:808', '64:ff9b:ffff::1']],
    ['Teredo 2001::/32', ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::808:808', '2001:0:808:808::1']],
    ['IPv4-compatible ::/96', ['::8.8.8.8', '::10.0.0.1', '::808:808']],
  ];
  for (const [range, addresses] of refusedOutright) {
    it(`${range}: refused whatever it embeds`, () => {
      for (const a of addresses) expect(isNonPublicAddress(a), a).toBe(true);
    });
  }
  it('refuses a live URL whose host resolves to any of these forms of a non-public or unusable address', async () => {
    for (const host of ['mapped', 'translated', 'nat64', 'nat64-local', 'sixtofour', 'teredo', 'compat']) {
      const r = await live(`https://${host}.example/h`);
      expect(r.ok, host).toBe(false);
      expect(r.ok ? '' : r.reason, host).toMatch(/^host resolves to a non-public address/);
    }
    for (const u of ['https://[::ffff:0:10.0.0.1]/h', 'https://[64:ff9b:1::808:808]/h', 'https://[64:ff9b::a9fe:a9fe]/h']) {
      const r = await live(u);
      expect(r.ok ? '' : r.reason, u).toMatch(/non-public address/);
    }
    expect((await live('https://translated-public.example/h')).ok).toBe(true);
  });
});

describe('redactUrl', () => {
  it('checks without DNS: syntax and literal addresses only, a host name is left unresolved', () => {
    const strict = { allowPrivateTargetsInTest: false, resolve: () => Promise.reject(new Error('no DNS here')) };
    const lenient = { allowPrivateTargetsInTest: true, resolve: strict.resolve };
    expect(checkWebhookTargetWithoutDns('https://no-such-host.invalid/h', 'test', strict)).toMatchObject({ ok: true, resolved: false });
    expect(checkWebhookTargetWithoutDns('http://10.0.0.1/h', 'test', strict)).toEqual({
      ok: false,
      reason: 'host resolves to a non-public address (10.0.0.1)',
    });
    expect(checkWebhookTargetWithoutDns('http://[::1]/h', 'test', lenient)).toMatchObject({ ok: true, resolved: true });
    expect(checkWebhookTargetWithoutDns('http://[::1]/h', 'live', lenient)).toEqual({ ok: false, reason: 'live mode requires https' });
    expect(checkWebhookTargetWithoutDns('https://[::1]/h', 'live', lenient)).toMatchObject({ ok: false });
    expect(checkWebhookTargetWithoutDns('https://93.184.216.34/h', 'live', strict)).toMatchObject({ ok: true, resolved: true });
    expect(checkWebhookTargetWithoutDns('https://u:p@no-such-host.invalid/h', 'test', lenient)).toMatchObject({ ok: false });
  });

  it('hides credentials and query values', () => {
    expect(redactUrl('https://u:p@h.example/x?token=abc&b=2#f')).toBe('https://h.example/x?token=***&b=***');
    expect(redactUrl('::')).toBe('(invalid url)');
  });
});
