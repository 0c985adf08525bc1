import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { RATE_LIMITS_OFF } from '../../../src/api/rate-limit-http.js';
import { buildServer } from '../../../src/api/server.js';
import type { Db } from '../../../src/db/database.js';
import { createRateService } from '../../../src/rates/index.js';
import { SecretBox } from '../../../src/security/secret-box.js';

// The seeded database's invariants (scripts/bench/scale/seed.ts): the journal balances (every entry's legs sum to zero
// per asset, and no entry is without legs), and the real API, signed with the largest merchant's key, answers GET for
// one of its seeded paid sessions with the session's id, status and amount.

export interface ScaleCheck {
  entries: number;
  unbalanced: number;
  entriesWithoutLegs: number;
  session: string;
  getStatus: number;
  getBody: { id?: string; status?: string; amount_total?: unknown; payment_status?: unknown };
}

export async function checkSeeded(s: { db: Db; largest: { merchantId: string; key: string; secret: string } }): Promise<ScaleCheck> {
  const db = s.db;
  const balance = await sql<{ entries: string; unbalanced: string; empty: string }>`
    select (select count(*) from journal_entries)::text as entries,
           (select count(*) from (select 1 from journal_legs group by entry_id, asset having sum(amount) <> 0) x)::text as unbalanced,
           (select count(*) from journal_entries e where not exists (select 1 from journal_legs l where l.entry_id = e.id))::text as empty`.execute(
    db,
  );
  const b = balance.rows[0]!;
  const session = await db
    .selectFrom('payment_sessions')
    .select('id')
    .where('merchant_id', '=', s.largest.merchantId)
    .where('mode', '=', 'test')
    .where('status', '=', 'paid')
    .where('id', 'like', 'cs\\_%')
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  const get = await signedGet(db, s.largest, `/api/v1/checkout/sessions/${session.id}`);
  return {
    entries: Number(b.entries),
    unbalanced: Number(b.unbalanced),
    entriesWithoutLegs: Number(b.empty),
    session: session.id,
    getStatus: get.status,
    getBody: get.body,
  };
}

async function signedGet(
  db: Db,
  key: { key: string; secret: string },
  url: string,
): Promise<{ status: number; body: ScaleCheck['getBody'] }> {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 2 });
  const app = await buildServer({
    db,
    redis,
    box: new SecretBox('42'.repeat(32)),
    rates: createRateService({ sources: ['peg'], timeoutMs: 1000, cacheTtlMs: 30_000 }),
    checkoutBaseUrl: 'https://pay.example/pay',
    docsUrl: 'https://pay.example/docs/errors',
    redisPrefix: `sp_bench_scale_${randomBytes(3).toString('hex')}`,
    authWindowSeconds: 300,
    maxBodyBytes: 65_536,
    sessionLifetimeSeconds: 1800,
    logLevel: 'silent',
    rateLimits: RATE_LIMITS_OFF,
  });
  try {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const nonce = randomUUID();
    const r = await app.inject({
      method: 'GET',
      url,
      headers: {
        authorization: `Bearer ${key.key}`,
        'x-service-timestamp': timestamp,
        'x-service-nonce': nonce,
        'x-service-signature': createHmac('sha256', key.secret).update(`${timestamp}.${nonce}.`).digest('hex'),
      },
    });
    return { status: r.statusCode, body: r.json() as ScaleCheck['getBody'] };
  } finally {
    await app.close();
    redis.disconnect();
  }
}
