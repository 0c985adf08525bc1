import { plainSession } from '../support/new-session.js';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createDb, type Db } from '../../src/db/database.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { findSessionReceived } from '../../src/ledger/payments/session-payments.js';
import { insertSession } from '../../src/ledger/payments/sessions.js';
import { createLogger } from '../../src/logger.js';
import { start, type RunningService } from '../../src/main.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { TEST_MASTER_KEY } from '../support/api-harness.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { RATE_LIMITS_OFF_ENV } from '../support/env.js';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis.js';
import { SignedClient } from '../support/signed-client.js';

// The API's hot path on one host (docs/performance.md, "API: what bounds the ratio"): the service reaches Redis over a
// Unix-domain socket when REDIS_URL is unix:///path (src/start/redis.ts), and a pool with named statements sends the
// session insert and the session read as named prepared statements (src/db/named-statements.ts), whose explicit
// column lists keep working after a migration adds a column.

let t: TestDatabase;
let redis: PrivateRedis;
let service: RunningService;
let client: SignedClient;
let merchantId: string;
const prefix = `sp_sock_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  t = await createTestDatabase();
  redis = await startPrivateRedis({ unixSocket: true });
  const env = {
    MASTER_KEY: TEST_MASTER_KEY,
    DATABASE_URL: t.url,
    REDIS_URL: redis.socketUrl!,
    REDIS_KEY_PREFIX: prefix,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    ROLES: 'api',
    ...RATE_LIMITS_OFF_ENV,
  };
  const config = loadConfig(env);
  service = await start(config, env, createLogger(config.LOG_LEVEL));
  const m = await createMerchant(t.db, new SecretBox(TEST_MASTER_KEY), { name: 'Socket shop' });
  merchantId = m.merchantId;
  client = new SignedClient(`http://127.0.0.1:${service.port}`, { key: m.testKey.key, secret: m.testKey.secret });
}, 60_000);
afterAll(async () => {
  await service?.stop();
  await redis?.stop();
  await t?.destroy();
});

const newSession = (id: string) => plainSession({ id, merchantId });

/** The named statements prepared on the pool's one connection. */
const prepared = async (db: Db) =>
  (await sql<{ name: string }>`select name from pg_prepared_statements order by name`.execute(db)).rows.map((r) => r.name);

describe('API hot path', () => {
  it('with REDIS_URL=unix:///path the service talks to Redis over the socket only', async () => {
    const created = await client.post('/api/v1/checkout/sessions/create', { amount: '5.00', currency: 'USD', order_id: 'sock-1' });
    expect(created.status).toBe(200);
    const got = await client.get(`/api/v1/checkout/sessions/${created.json.id}`);
    expect(got.status).toBe(200);
    expect(got.json.id).toBe(created.json.id);

    // Watched from a TCP connection of our own: the service's connections are the socket's, and its nonces landed.
    const observer = new Redis(redis.url);
    try {
      const clients = ((await observer.client('LIST')) as string).trim().split('\n');
      const own = (await observer.client('ID')) as number;
      const others = clients.filter((c) => !c.startsWith(`id=${own} `));
      expect(others.length).toBeGreaterThanOrEqual(2); // the shared connection and the API's auth connection
      for (const c of others) expect(c).toContain(`addr=${redis.socketPath}`);
      expect(others.some((c) => c.includes('name=stablepay-api-auth'))).toBe(true);
      expect((await observer.keys(`${prefix}:*`)).length).toBeGreaterThanOrEqual(2); // two requests, two nonces
    } finally {
      observer.disconnect();
    }
  });

  it('a pool with named statements prepares the session insert and read once per connection', async () => {
    const named = createDb(t.url, 1, { namedStatements: true });
    const plain = createDb(t.url, 1);
    try {
      const id = `cs_${randomBytes(8).toString('hex')}`;
      const row = await insertSession(named, newSession(id));
      const found = await findSessionReceived(named, id);
      expect(found?.session).toEqual(row);
      expect(found?.payments).toEqual([]);
      expect(await prepared(named)).toEqual(['sp_find_session_received', 'sp_insert_session']);
      // Sent again: the same names, no new statement, the same answer.
      expect((await findSessionReceived(named, id))?.session).toEqual(row);
      expect(await prepared(named)).toEqual(['sp_find_session_received', 'sp_insert_session']);

      // Without the option (DATABASE_POOL_MODE=transaction: PgBouncer) nothing is prepared, and the answer is the same.
      expect((await findSessionReceived(plain, id))?.session).toEqual(row);
      expect(await insertSession(plain, newSession(`cs_${randomBytes(8).toString('hex')}`))).toMatchObject({ merchant_id: merchantId });
      expect(await prepared(plain)).toEqual([]);

      // A migration adding a column while the statements are prepared: they still answer, with the same columns.
      await sql`alter table payment_sessions add column hot_path_probe text`.execute(t.db);
      try {
        expect((await findSessionReceived(named, id))?.session).toEqual(row);
        const second = await insertSession(named, newSession(`cs_${randomBytes(8).toString('hex')}`));
        expect(Object.keys(second).sort()).toEqual(Object.keys(row).sort());
      } finally {
        await sql`alter table payment_sessions drop column hot_path_probe`.execute(t.db);
      }
    } finally {
      await named.destroy();
      await plain.destroy();
    }
  });
});
