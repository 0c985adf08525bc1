import { describe, expect, it } from 'vitest';
import { clientIpBucket } from '../../src/api/client-ip.js';

describe('client IP bucket of the per-IP limits', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['2001:db8:1:2:3:4:192.0.2.1', '2001:db8:1:2::/64'],
  ])('%s counts as %s', (ip, bucket) => {
    expect(clientIpBucket(ip)).toBe(bucket);
  });

  it('gives two /64 networks two buckets', () => {
    expect(clientIpBucket('2001:db8:1:2::1')).not.toBe(clientIpBucket('2001:db8:1:3::1'));
  });
});
