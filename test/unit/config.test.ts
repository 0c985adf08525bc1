import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const KEY = 'a'.repeat(64);

describe('configuration', () => {
  it('applies defaults and derives the checkout base URL', () => {
    const c = loadConfig({ MASTER_KEY: KEY, PUBLIC_BASE_URL: 'https://pay.example.com/' });
    expect(c.PORT).toBe(3000);
    expect(c.ROLES).toEqual(['api', 'worker', 'watcher']);
    expect(c.checkoutBaseUrl).toBe('https://pay.example.com/pay');
    expect(c.AUTH_TIMESTAMP_WINDOW_SECONDS).toBe(300);
  });

  it('names every bad variable in one message', () => {
    let err: unknown;
    try {
      loadConfig({ PORT: 'eighty', MASTER_KEY: 'short', ROLES: 'api,teapot', DATABASE_URL: 'not a url' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    for (const name of ['PORT', 'MASTER_KEY', 'ROLES', 'DATABASE_URL']) expect(msg).toContain(`${name}:`);
    expect(msg).not.toContain('short'); // the secret's value is never echoed
  });

  it('requires MASTER_KEY', () => {
    expect(() => loadConfig({})).toThrow(/MASTER_KEY: is required/);
  });
});

describe('rate limits and proxy trust', () => {
  it('has defaults that a merchant sending everything from one IP stays under, and 0 turns a limit off', () => {
    const c = loadConfig({ MASTER_KEY: KEY });
    expect(c.API_RATE_LIMIT_PER_KEY_PER_SECOND).toBe(100);
    expect(c.API_RATE_LIMIT_PER_IP_PER_SECOND).toBe(200);
    expect(c.API_AUTH_FAILURES_PER_IP_PER_MINUTE).toBe(30);
    expect(c.CHECKOUT_STREAMS_PER_SESSION).toBe(10);
    expect(c.CHECKOUT_STREAMS_PER_IP).toBe(50);
    expect(c.TRUST_PROXY).toBe(false);
    expect(loadConfig({ MASTER_KEY: KEY, API_RATE_LIMIT_PER_KEY_PER_SECOND: '0' }).API_RATE_LIMIT_PER_KEY_PER_SECOND).toBe(0);
  });

  it.each([
    ['true', true],
    ['false', false],
    ['2', 2],
    ['10.0.0.0/8, 192.0.2.1', ['10.0.0.0/8', '192.0.2.1']],
    ['::1,fd00::/8', ['::1', 'fd00::/8']],
  ])('reads TRUST_PROXY=%s', (value, expected) => {
    expect(loadConfig({ MASTER_KEY: KEY, TRUST_PROXY: value }).TRUST_PROXY).toEqual(expected);
  });

  it('names a bad limit or TRUST_PROXY', () => {
    expect(() => loadConfig({ MASTER_KEY: KEY, TRUST_PROXY: 'yes please' })).toThrow(/TRUST_PROXY:/);
    expect(() => loadConfig({ MASTER_KEY: KEY, CHECKOUT_STREAMS_PER_IP: '-1' })).toThrow(/CHECKOUT_STREAMS_PER_IP:/);
  });
});
