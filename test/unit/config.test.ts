import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { usesNamedStatements } from '../../src/db/named-statements.js';
import { keyMaterialFromEnv } from '../../src/signer/from-env.js';

const KEY = 'a'.repeat(64);

describe('configuration', () => {
  it('applies defaults and derives the checkout base URL', () => {
    const c = loadConfig({ MASTER_KEY: KEY, PUBLIC_BASE_URL: 'https://pay.example.com/' });
    expect(c.PORT).toBe(3000);
    expect(c.ROLES).toEqual(['api', 'worker', 'watcher']);
    expect(c.checkoutBaseUrl).toBe('https://pay.example.com/pay');
    expect(c.AUTH_TIMESTAMP_WINDOW_SECONDS).toBe(300);
  });

  it('sends named prepared statements in direct pool mode unless DATABASE_NAMED_STATEMENTS=false, never through a bouncer', () => {
    const at = (env: Record<string, string>) => usesNamedStatements(loadConfig({ MASTER_KEY: KEY, ...env }));
    expect(at({})).toBe(true);
    expect(at({ DATABASE_NAMED_STATEMENTS: 'false' })).toBe(false);
    expect(at({ DATABASE_NAMED_STATEMENTS: '0' })).toBe(false);
    const bouncer = {
      DATABASE_POOL_MODE: 'transaction',
      DATABASE_DIRECT_URL: 'postgres://127.0.0.1/x',
      ROLES: 'api',
      MIGRATE_ON_START: 'false',
    };
    expect(at(bouncer)).toBe(false);
    expect(at({ ...bouncer, DATABASE_NAMED_STATEMENTS: 'true' })).toBe(false);
    expect(() => loadConfig({ MASTER_KEY: KEY, DATABASE_NAMED_STATEMENTS: 'sometimes' })).toThrow(/DATABASE_NAMED_STATEMENTS/);
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

describe('the signer role and its clients (docs/signer.md)', () => {
  const MNEMONIC = 'test test test test test test test test test test test junk';
  it('runs the signer alone, and refuses to share its process with another role', () => {
    expect(loadConfig({ MASTER_KEY: KEY, ROLES: 'signer', SIGNER_SOCKET: '/run/stablepay/signer.sock' }).ROLES).toEqual(['signer']);
    expect(() => loadConfig({ MASTER_KEY: KEY, ROLES: 'signer,worker' })).toThrow(/ROLES: signer runs alone/);
    expect(() => loadConfig({ MASTER_KEY: KEY, SIGNER_SOCKET: 'relative.sock' })).toThrow(/SIGNER_SOCKET: must be an absolute path/);
  });

  it('gives the seed to the signer only: a client process with HD_MNEMONIC is refused, without echoing it', () => {
    expect(keyMaterialFromEnv({ HD_MNEMONIC: MNEMONIC, SIGNER_SOCKET: '/tmp/s.sock' }, { signerRole: true }).kind).toBe('signer');
    expect(() => keyMaterialFromEnv({ SIGNER_SOCKET: '/tmp/s.sock' }, { signerRole: true })).toThrow(/ROLES=signer needs HD_MNEMONIC/);
    const client = keyMaterialFromEnv({ SIGNER_SOCKET: '/tmp/s.sock' });
    expect(client.kind).toBe('remote');
    expect(String((client as { signer: unknown }).signer)).toBe('[RemoteSigner]');
    let err: Error | undefined;
    try {
      keyMaterialFromEnv({ HD_MNEMONIC: MNEMONIC, SIGNER_SOCKET: '/tmp/s.sock' });
    } catch (e) {
      err = e as Error;
    }
    expect(err?.message).toMatch(/HD_MNEMONIC is set in a process that uses the signer/);
    expect(err?.message).not.toContain('junk');
    // Without a signer, a mnemonic signs in process, as before.
    expect(keyMaterialFromEnv({ HD_MNEMONIC: MNEMONIC }).kind).toBe('signer');
  });
});
