import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/security/secret-box.js';
import { resolveApiKey } from '../../src/ledger/merchants/merchants.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { TEST_MASTER_KEY } from '../support/api-harness.js';

const run = promisify(execFile);
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t.destroy());

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  try {
    const r = await run('node', ['--import', 'tsx', 'src/cli/index.ts', ...args], {
      env: { ...process.env, DATABASE_URL: t.url, MASTER_KEY: TEST_MASTER_KEY },
    });
    return { code: 0, out: r.stdout, err: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}

describe('operator CLI (a real child process)', () => {
  it('creates a merchant with a working test key, issues, lists and revokes keys', async () => {
    // A literal public address: nothing to resolve on a machine without DNS.
    const created = await cli('merchant', 'create', '--name', 'Kiosk', '--webhook-url', 'https://93.184.216.34/hook');
    expect(created.code).toBe(0);
    const m = JSON.parse(created.out);
    expect(m.merchant_id).toMatch(/^mch_[0-9A-Za-z]{24}$/);
    expect(m.test_key.key).toMatch(/^sk_test_/);
    expect(m.webhook_url).toBe('https://93.184.216.34/hook');
    const box = new SecretBox(TEST_MASTER_KEY);
    const resolved = await resolveApiKey(t.db, box, m.test_key.key);
    expect(resolved).toMatchObject({ merchantId: m.merchant_id, mode: 'test', secret: m.test_key.secret });

    // Stored as hash and ciphertext only.
    const row = await t.db.selectFrom('api_keys').selectAll().where('merchant_id', '=', m.merchant_id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(m.test_key.key);
    expect(JSON.stringify(row)).not.toContain(m.test_key.secret);

    const live = JSON.parse((await cli('key', 'create', '--merchant', m.merchant_id, '--mode', 'live')).out);
    expect(live.key).toMatch(/^sk_live_/);
    const list = JSON.parse((await cli('key', 'list', '--merchant', m.merchant_id)).out);
    expect(list.map((k: any) => k.mode).sort()).toEqual(['live', 'test']);
    expect(JSON.stringify(list)).not.toContain(live.secret);

    expect((await cli('key', 'revoke', live.key_prefix)).code).toBe(0);
    expect(await resolveApiKey(t.db, box, live.key)).toBeUndefined();
    const again = await cli('key', 'revoke', live.key_prefix);
    expect(again.code).toBe(2);
    expect(again.err).toContain('no active key');
  }, 240_000); // five CLI processes, each loading the service under tsx: over 60 s on a loaded machine (CI, 2026-11-24)

  it('checks --webhook-url against the endpoint rules', async () => {
    const refused = await cli('merchant', 'create', '--name', 'Local', '--webhook-url', 'http://127.0.0.1:9999/hook');
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('refused for live mode');
    expect(await t.db.selectFrom('merchants').select('id').where('name', '=', 'Local').execute()).toHaveLength(0);
    const testOnly = await cli('merchant', 'create', '--name', 'Local', '--webhook-url', 'http://127.0.0.1:9999/hook', '--test-only');
    expect(testOnly.code).toBe(0);
    expect(JSON.parse(testOnly.out).webhook_url).toBe('http://127.0.0.1:9999/hook');
  });

  it('--test-only checks the test rules without DNS: an unresolvable host is accepted with it, refused without it', async () => {
    const url = 'https://no-such-host.invalid/hooks';
    const refused = await cli('merchant', 'create', '--name', 'Offline', '--webhook-url', url);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('does not resolve');
    expect(await t.db.selectFrom('merchants').select('id').where('name', '=', 'Offline').execute()).toHaveLength(0);
    const testOnly = await cli('merchant', 'create', '--name', 'Offline', '--webhook-url', url, '--test-only');
    expect(testOnly.code).toBe(0);
    expect(JSON.parse(testOnly.out).webhook_url).toBe(url);
  });

  it('answers bad usage with exit code 2 and a message naming the problem', async () => {
    const r = await cli('merchant', 'create');
    expect(r.code).toBe(2);
    expect(r.err).toContain('--name is required');
    expect((await cli('key', 'create', '--merchant', 'mch_nope', '--mode', 'live')).err).toContain('no merchant');
    expect((await cli('key', 'create', '--merchant', 'x', '--mode', 'prod')).err).toContain('--mode must be test or live');
    expect((await cli('frobnicate')).code).toBe(2);
  });

  it('refuses to start without a valid MASTER_KEY, naming the variable', async () => {
    try {
      await run('node', ['--import', 'tsx', 'src/cli/index.ts', 'key', 'list'], {
        env: { ...process.env, DATABASE_URL: t.url, MASTER_KEY: 'nope' },
      });
      expect.unreachable();
    } catch (e) {
      expect((e as { stderr: string }).stderr).toContain('MASTER_KEY: must be 64 hex characters');
      expect((e as { stderr: string }).stderr).not.toContain('nope');
    }
  });

  it('subscriptions held / resolve: lists holds as JSON, refuses to resolve what is not held (exit 2)', async () => {
    const held = await cli('subscriptions', 'held');
    expect(held.code).toBe(0);
    expect(JSON.parse(held.out)).toEqual([]);
    const unknown = await cli('subscriptions', 'resolve', 'sub_nope', '--retry');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('no subscription sub_nope');
    const both = await cli('subscriptions', 'resolve', 'sub_nope', '--retry', '--cancel');
    expect(both.code).toBe(2);
    expect(both.err).toContain('--retry|--cancel');
  }, 120_000);
});
