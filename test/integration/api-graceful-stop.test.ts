import { randomBytes, randomUUID } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { createLogger } from '../../src/logger.js';
import { start, type RunningService } from '../../src/main.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { TEST_MASTER_KEY } from '../support/api-harness.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { RATE_LIMITS_OFF_ENV, REDIS_URL } from '../support/env.js';
import { sign } from '../support/signed-client.js';

// Stopping the API role (src/main.ts `stop()`, what SIGTERM runs) under load, with clients hanging up mid-request as
// a load generator ending or a proxy's timeout does. Before the fix, Node's server.close() completed as soon as the
// clients' connections were gone while their requests were still being handled, and stop() destroyed the pool and
// Redis under them ("driver has already been destroyed" logged by each); and a client keeping its connection alive
// held the stop for Fastify's keepAliveTimeout (72 s), past Kubernetes' 30 s grace period. The stop must let every
// started request finish: no answer is a 5xx, nothing logs an error, every create answered 200 is in the database and
// every create is whole (the session and its stored idempotent response, or neither), answered or not.

const GRACE_MS = 20_000;
const REQUESTS = 300;
let t: TestDatabase;
let prefix: string;
let creds: { key: string; secret: string };

beforeAll(async () => {
  t = await createTestDatabase();
  prefix = `sp_stop_${randomBytes(4).toString('hex')}`;
  const m = await createMerchant(t.db, new SecretBox(TEST_MASTER_KEY), { name: 'Stop shop' });
  creds = { key: m.testKey.key, secret: m.testKey.secret };
}, 60_000);
afterAll(async () => {
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  await t?.destroy();
});

interface LogLine {
  level: number;
  msg: string;
  text: string;
}

/** The API role as src/main.ts starts it, its own log lines and its listener's captured. */
async function startApi(run: string): Promise<{ service: RunningService; base: string; lines: LogLine[] }> {
  const env = {
    MASTER_KEY: TEST_MASTER_KEY,
    DATABASE_URL: t.url,
    REDIS_URL,
    REDIS_KEY_PREFIX: `${prefix}_${run}`,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ROLES: 'api',
    MIGRATE_ON_START: 'false',
    METRICS_PORT: 'off',
    DATABASE_POOL_SIZE: '4', // requests queue for a connection, as under a benchmark's load
    SHUTDOWN_GRACE_MS: String(GRACE_MS),
    ...RATE_LIMITS_OFF_ENV,
  };
  const lines: LogLine[] = [];
  const capture = (text: string) => {
    for (const l of text.split('\n').filter(Boolean)) {
      try {
        const j = JSON.parse(l) as { level: number; msg: string };
        lines.push({ level: j.level, msg: j.msg, text: l });
      } catch {
        lines.push({ level: 60, msg: 'unparsable log line', text: l });
      }
    }
  };
  const httpLogStream = new Writable({
    write(chunk: Buffer, _enc, done) {
      capture(chunk.toString('utf8'));
      done();
    },
  });
  const config = loadConfig(env);
  const service = await start(config, env, createLogger(config.LOG_LEVEL, {}, capture), { httpLogStream });
  return { service, base: `http://127.0.0.1:${service.port}`, lines };
}

type Outcome =
  | { kind: 'answered'; status: number; create: boolean; key?: string; id?: string }
  | { kind: 'hung up' | 'refused'; create: boolean; key?: string; error?: string };

interface Call {
  outcome: Promise<Outcome>;
  /** The client goes away: its connection is destroyed, whatever the request's state. */
  hangUp(): void;
}

/** One signed request, a create (with an Idempotency-Key) or a read of `sessionId`. */
function call(base: string, o: { create: boolean; sessionId: string; agent: Agent | false; onAnswer?: () => void }): Call {
  const key = o.create ? `stop-${randomUUID()}` : undefined;
  const body = o.create ? JSON.stringify({ amount: '12.34', currency: 'USD', order_id: key }) : '';
  const timestamp = String(Math.floor(Date.now() / 1000));
  const nonce = randomUUID();
  const headers: Record<string, string> = {
    authorization: `Bearer ${creds.key}`,
    'x-service-timestamp': timestamp,
    'x-service-nonce': nonce,
    'x-service-signature': sign(creds.secret, timestamp, nonce, body),
    ...(o.create ? { 'content-type': 'application/json', 'idempotency-key': key as string } : {}),
  };
  const url = new URL(o.create ? `${base}/api/v1/checkout/sessions/create` : `${base}/api/v1/checkout/sessions/${o.sessionId}`);
  let hungUp = false;
  let req: ReturnType<typeof httpRequest> | undefined;
  const outcome = new Promise<Outcome>((resolve) => {
    const k = key ? { key } : {};
    req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname, method: o.create ? 'POST' : 'GET', headers, agent: o.agent },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c.toString('utf8');
        });
        res.on('end', () => {
          o.onAnswer?.();
          const status = res.statusCode ?? 0;
          const id = status === 200 && o.create ? (JSON.parse(text) as { id: string }).id : undefined;
          resolve({ kind: 'answered', status, create: o.create, ...k, ...(id ? { id } : {}) });
        });
        res.on('error', () => resolve({ kind: 'hung up', create: o.create, ...k }));
      },
    );
    req.on('error', (err) => resolve({ kind: hungUp ? 'hung up' : 'refused', create: o.create, ...k, error: String(err) }));
    req.end(body);
  });
  return {
    outcome,
    hangUp() {
      hungUp = true;
      req?.destroy();
    },
  };
}

/**
 * REQUESTS at once; once the service is busy (20 answered, the rest running or queued for one of the 4 pooled
 * connections), the clients chosen by `hangsUp` go away together and the stop starts at the same moment, as when a load
 * generator ends and SIGTERM follows.
 */
async function stopUnderLoad(run: string, o: { agent: Agent | false; hangsUp: (i: number) => boolean }) {
  const { service, base, lines } = await startApi(run);
  const warm = await call(base, { create: true, sessionId: '', agent: false }).outcome;
  expect(warm).toMatchObject({ kind: 'answered', status: 200 });
  const sessionId = (warm as { id: string }).id;

  let answered = 0;
  let busy = () => {};
  const isBusy = new Promise<void>((r) => {
    busy = r;
  });
  const calls: Array<{ call: Call; hangsUp: boolean }> = [];
  for (let i = 0; i < REQUESTS; i++) {
    const onAnswer = () => {
      if (++answered === 20) busy();
    };
    calls.push({ call: call(base, { create: i % 2 === 0, sessionId, agent: o.agent, onAnswer }), hangsUp: o.hangsUp(i) });
  }
  await isBusy;
  for (const c of calls) if (c.hangsUp) c.call.hangUp();
  const stopAt = Date.now();
  await service.stop();
  const stopMs = Date.now() - stopAt;
  const all = await Promise.all(calls.map((c) => c.call.outcome));

  const count = (k: Outcome['kind']) => all.filter((a) => a.kind === k).length;
  const byStatus = new Map<number, number>();
  for (const a of all) if (a.kind === 'answered') byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
  const errors = lines.filter((l) => l.level >= 50 || /destroyed|Connection is closed|cut off/i.test(l.text));
  console.log(
    `${run}: stop took ${stopMs} ms; answered ${count('answered')} (${[...byStatus].map(([s, n]) => `${s}: ${n}`).join(', ')}),` +
      ` hung up ${count('hung up')}, refused ${count('refused')} (${refusals(all)}); error lines ${errors.length}` +
      (errors[0] ? `, first: ${errors[0].text.slice(0, 300)}` : ''),
  );

  // Every create answered 200 is stored; every create of this run is whole (its session and stored response, or neither).
  const created = all.filter((a): a is Extract<Outcome, { kind: 'answered' }> => a.kind === 'answered' && a.create && a.status === 200);
  const keys = all.flatMap((a) => (a.key ? [a.key] : []));
  const rows = await t.db.selectFrom('payment_sessions').select(['id', 'order_id']).where('order_id', 'in', keys).execute();
  const stored = await t.db.selectFrom('idempotency_keys').select('key').where('key', 'in', keys).execute();
  return { all, stopMs, errors, created, rows, stored };
}

/** Why requests got no answer without a hang-up, counted by error: ECONNREFUSED (the listener was closed) and so on. */
function refusals(all: Outcome[]): string {
  const by = new Map<string, number>();
  for (const a of all) if (a.kind === 'refused') by.set(a.error ?? '', (by.get(a.error ?? '') ?? 0) + 1);
  return [...by].map(([e, n]) => `${e}: ${n}`).join(', ');
}

describe('stopping the API role under load', () => {
  it('lets every request finish whose client hung up (a load generator ending) before the pool is destroyed', async () => {
    const r = await stopUnderLoad('hang-ups', { agent: false, hangsUp: () => true });
    expect(r.errors.map((l) => l.text)).toEqual([]);
    expect(r.all.filter((a) => a.kind === 'answered' && a.status >= 500)).toEqual([]);
    expect(r.stopMs).toBeLessThan(GRACE_MS);
    const ids = new Set(r.rows.map((row) => row.id));
    expect(r.created.filter((c) => !ids.has(c.id as string))).toEqual([]);
    expect(new Set(r.stored.map((s) => s.key))).toEqual(new Set(r.rows.map((row) => row.order_id)));
    // Requests whose clients hung up still ran to their end: more sessions than answered creates.
    expect(r.rows.length).toBeGreaterThan(r.created.length);
  }, 120_000);

  it('answers the kept-alive clients that stay, promptly, and lets the others finish: no 5xx, nothing lost', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    try {
      const r = await stopUnderLoad('keep-alive', { agent, hangsUp: (i) => i % 3 !== 0 });
      expect(r.errors.map((l) => l.text)).toEqual([]);
      expect(r.all.filter((a) => a.kind === 'answered' && a.status >= 500)).toEqual([]);
      // A client that stayed and whose request had reached the service got its answer.
      expect(r.all.filter((a, i) => i % 3 === 0 && a.kind === 'hung up')).toEqual([]);
      expect(r.stopMs).toBeLessThan(GRACE_MS); // not the 72 s keep-alive timeout, nor the grace period
      const ids = new Set(r.rows.map((row) => row.id));
      expect(r.created.filter((c) => !ids.has(c.id as string))).toEqual([]);
      expect(new Set(r.stored.map((s) => s.key))).toEqual(new Set(r.rows.map((row) => row.order_id)));
    } finally {
      agent.destroy();
    }
  }, 120_000);
});
