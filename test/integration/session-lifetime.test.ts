import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { createLogger } from '../../src/logger.js';
import { start, type RunningService } from '../../src/main.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { TEST_MASTER_KEY } from '../support/api-harness.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { REDIS_URL } from '../support/env.js';
import { SignedClient } from '../support/signed-client.js';

// SESSION_LIFETIME_SECONDS reaches sessions through the service as src/main.ts starts it (no chain needed to create
// one), and a merchant's own lifetime, set with the operator CLI, wins over it until set back to `default`.

const run = promisify(execFile);
let t: TestDatabase;
let service: RunningService;
let env: Record<string, string>;
let client: SignedClient;
let merchantId: string;

beforeAll(async () => {
  t = await createTestDatabase();
  env = {
    MASTER_KEY: TEST_MASTER_KEY,
    DATABASE_URL: t.url,
    REDIS_URL,
    REDIS_KEY_PREFIX: `sp_life_${randomBytes(4).toString('hex')}`,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    ROLES: 'api',
    SESSION_LIFETIME_SECONDS: '120',
  };
  const config = loadConfig(env);
  service = await start(config, env, createLogger(config.LOG_LEVEL));
  const m = await createMerchant(t.db, new SecretBox(TEST_MASTER_KEY), { name: 'Lifetime shop' });
  merchantId = m.merchantId;
  client = new SignedClient(`http://127.0.0.1:${service.port}`, { key: m.testKey.key, secret: m.testKey.secret });
}, 60_000);
afterAll(async () => {
  await service?.stop();
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${env.REDIS_KEY_PREFIX}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  await t?.destroy();
});

async function lifetimeOfNewSession(): Promise<number> {
  const r = await client.post('/api/v1/checkout/sessions/create', {
    amount: '5.00',
    currency: 'USD',
    order_id: `life-${randomBytes(4).toString('hex')}`,
  });
  expect(r.status).toBe(200);
  const row = await t.db
    .selectFrom('payment_sessions')
    .select(['created_at', 'expires_at'])
    .where('id', '=', r.json.id)
    .executeTakeFirstOrThrow();
  expect(r.json.expires_at - r.json.created).toBe((row.expires_at.getTime() - row.created_at.getTime()) / 1000);
  return (row.expires_at.getTime() - row.created_at.getTime()) / 1000;
}

async function cli(...args: string[]): Promise<any> {
  const r = await run('node', ['--import', 'tsx', 'src/cli/index.ts', ...args], { env: { ...process.env, ...env }, timeout: 45_000 });
  return JSON.parse(r.stdout);
}

describe('session lifetime', () => {
  it('is SESSION_LIFETIME_SECONDS for a merchant without its own, and the merchant setting wins over it', async () => {
    expect(await lifetimeOfNewSession()).toBe(120);
    expect(await cli('merchant', 'show', merchantId)).toMatchObject({ session_lifetime_seconds: 120, session_lifetime_source: 'default' });

    const updated = await cli('merchant', 'update', merchantId, '--session-lifetime-seconds', '300');
    expect(updated).toMatchObject({
      merchant_id: merchantId,
      session_lifetime_seconds: 300,
      session_lifetime_source: 'merchant',
      underpayment_tolerance_bps: 0,
    });
    expect(await lifetimeOfNewSession()).toBe(300);
    const listed = (await cli('merchant', 'list')) as Array<{ merchant_id: string }>;
    expect(listed.find((x) => x.merchant_id === merchantId)).toMatchObject({
      session_lifetime_seconds: 300,
      session_lifetime_source: 'merchant',
    });

    expect(
      await cli('merchant', 'update', merchantId, '--session-lifetime-seconds', 'default', '--underpayment-tolerance-bps', '50'),
    ).toMatchObject({ session_lifetime_seconds: 120, session_lifetime_source: 'default', underpayment_tolerance_bps: 50 });
    expect(await lifetimeOfNewSession()).toBe(120);
    const row = await t.db
      .selectFrom('merchants')
      .select(['session_lifetime_seconds', 'underpayment_tolerance_bps'])
      .where('id', '=', merchantId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ session_lifetime_seconds: null, underpayment_tolerance_bps: 50 });
  }, 120_000);

  it('refuses settings out of range and changes nothing', async () => {
    const before = await t.db.selectFrom('merchants').selectAll().where('id', '=', merchantId).executeTakeFirstOrThrow();
    for (const args of [
      ['--session-lifetime-seconds', '59'],
      ['--session-lifetime-seconds', '604801'],
      ['--session-lifetime-seconds', '1.5'],
      ['--underpayment-tolerance-bps', '10001'],
      ['--underpayment-tolerance-bps', '-1'],
      [],
    ]) {
      const r = await run('node', ['--import', 'tsx', 'src/cli/index.ts', 'merchant', 'update', merchantId, ...args], {
        env: { ...process.env, ...env },
        timeout: 45_000,
      }).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => e,
      );
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/must be an integer|needs --session-lifetime-seconds|ambiguous|-1/);
    }
    expect(await t.db.selectFrom('merchants').selectAll().where('id', '=', merchantId).executeTakeFirstOrThrow()).toEqual(before);
  }, 120_000);
});
