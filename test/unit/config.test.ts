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
