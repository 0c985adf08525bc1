import { spawn } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { NETWORKS } from '../../../chains/registry.js';
import { RATE_LIMITS_OFF } from '../../../src/api/rate-limit-http.js';
import { buildServer } from '../../../src/api/server.js';
import type { Db } from '../../../src/db/database.js';
import { writeExport } from '../../../src/ledger/exports/export-writer.js';
import { createRateService } from '../../../src/rates/index.js';
import { SecretBox } from '../../../src/security/secret-box.js';
import { recordAttempts } from '../../../src/webhooks/deliveries.js';
import { relayBatch } from '../../../src/webhooks/relay.js';
import { explainable, largeTables, recordQueries, seqScanOffenders } from '../../../test/support/query-plans.js';
import { SCALE_BOX_KEY } from './seed.js';
import { signedRequest } from '../signed-request.js';

// The scale benchmark's measurements (scripts/bench/scale/run.ts), each on one database: run once on an empty one and
// once on the seeded one in the same run, so that every figure has its baseline beside it.

export interface Target {
  db: Db;
  url: string;
  merchant: { merchantId: string; key: string; secret: string };
}

export interface ApiFigures {
  peakRps: number;
  rate: number;
  routes: Record<'create' | 'get' | 'list', { p50: number; p99: number; rps: number; errors: number }>;
}

const serverFor = async (db: Db, redis: Redis) =>
  buildServer({
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

const signed = signedRequest;

/**
 * Signed create, get and list (the merchant's newest page) at half the peak rate: the peak is the get route's rate
 * unthrottled, measured first on this database. The server runs in this process (its own port): the load generator
 * shares the event loop, alike for both databases, so the ratio between them stands.
 */
export async function measureApi(t: Target, seconds: number, connections: number): Promise<ApiFigures> {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 2 });
  const app = await serverFor(t.db, redis);
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  let seq = 0;
  const tag = randomBytes(3).toString('hex');
  const create = () =>
    signed(
      t.merchant,
      'POST',
      '/api/v1/checkout/sessions/create',
      JSON.stringify({ amount: '19.99', currency: 'USD', order_id: `scale-${tag}-${seq++}` }),
    );
  try {
    const first = await fetch(url + '/api/v1/checkout/sessions/create', create() as RequestInit);
    const sessionId = ((await first.json()) as { id: string }).id;
    const get = () => signed(t.merchant, 'GET', `/api/v1/checkout/sessions/${sessionId}`);
    const list = () => signed(t.merchant, 'GET', '/api/v1/checkout/sessions?page=1&page_size=20');
    const run = async (make: () => object, overallRate?: number) => {
      const r = await autocannon({
        url,
        connections,
        duration: seconds,
        overallRate,
        requests: [{ setupRequest: (req: object) => ({ ...req, ...make() }) }],
      });
      return { p50: r.latency.p50, p99: r.latency.p99, rps: r.requests.average, errors: r.non2xx + r.errors + r.timeouts };
    };
    const peak = await run(get);
    const rate = Math.max(1, Math.floor(peak.rps / 2));
    return { peakRps: peak.rps, rate, routes: { create: await run(create, rate), get: await run(get, rate), list: await run(list, rate) } };
  } finally {
    await app.close();
    redis.disconnect();
  }
}

const decimals = (network: string, mode: 'test' | 'live', token: string): number | undefined => {
  const n = NETWORKS.find((x) => x.id === network);
  const tokens = n ? (n[mode].tokens.length > 0 ? n[mode].tokens : n.live.tokens) : [];
  return tokens.find((x) => x.symbol === token)?.decimals;
};

/** The operator's export (every merchant) of the busiest month's payments, as CSV: rows/s and the peak RSS. */
export async function measureExport(t: Target): Promise<{ rows: number; rowsPerSecond: number; peakRssMb: number; seconds: number }> {
  const until = new Date();
  const since = new Date(until.getTime() - 31 * 86_400_000);
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  let bytes = 0;
  const t0 = performance.now();
  try {
    const rows = await writeExport(
      t.db,
      { kind: 'payments', format: 'csv', filter: { since, until }, ctx: { tokenDecimals: decimals } },
      async (chunk) => {
        bytes += chunk.length;
      },
    );
    const seconds = (performance.now() - t0) / 1000;
    peak = Math.max(peak, process.memoryUsage().rss);
    return { rows, rowsPerSecond: rows / seconds, peakRssMb: peak / 2 ** 20, seconds };
  } finally {
    clearInterval(sampler);
  }
}

/** A process's peak resident set so far (VmHWM), MB; undefined once it has exited. */
function peakRssMbOf(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** A process's CPU time so far (user + system, from /proc: clock ticks of 10 ms), seconds; undefined once it has exited. */
function cpuSecondsOf(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/**
 * The operator's export as an operator runs it: `cli export payments --since <a month ago>` (the compiled CLI,
 * dist/src/cli/index.js, when built; else under tsx) in a process of its own, its file to a pipe this process drains and counts. Its memory is its own (VmHWM read from /proc while it
 * runs, every 20 ms, so the last reading is within 20 ms of its end), beside the same CLI's peak on a command that
 * reads nothing (`export payments` of an empty hour): the difference is what the rows cost, flat if it streams.
 */
export async function measureExportProcess(
  t: Pick<Target, 'url'>,
  o: { cli?: string; since?: Date; until?: Date } = {},
): Promise<{
  rows: number;
  rowsPerSecond: number;
  peakRssMb: number;
  idleRssMb: number;
  seconds: number;
  idleSeconds: number;
  /** Rows per second of the CPU time the rows added (the process's own, whatever the machine's load). */
  rowsPerCpuSecond: number;
  compiled: boolean;
  sha256: string;
}> {
  const until = o.until ?? new Date();
  const since = o.since ?? new Date(until.getTime() - 31 * 86_400_000);
  // The compiled CLI (`npm run build`; what the image runs) when there is one: tsx's loader alone holds ~50 MB more.
  // `o.cli`: another compiled CLI (e.g. the base commit's build, for old-versus-new in one run).
  const compiled = o.cli !== undefined || existsSync('dist/src/cli/index.js');
  const cliEntry = o.cli !== undefined ? [o.cli] : compiled ? ['dist/src/cli/index.js'] : ['--import', 'tsx', 'src/cli/index.ts'];
  const run = (from: Date, to: Date) =>
    new Promise<{ bytes: number; lines: number; peakMb: number; cpu: number; seconds: number; stderr: string; sha256: string }>(
      (resolve, reject) => {
        const child = spawn(
          process.execPath,
          [...cliEntry, 'export', 'payments', '--since', from.toISOString(), '--until', to.toISOString()],
          // The CLI loads the service's configuration: the seed's master key (the export decrypts nothing), no replica.
          {
            env: { ...process.env, DATABASE_URL: t.url, MASTER_KEY: SCALE_BOX_KEY, LOG_LEVEL: 'silent' },
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        let bytes = 0;
        let lines = 0;
        let stderr = '';
        let peakMb = 0;
        let cpu = 0;
        const hash = createHash('sha256');
        const t0 = performance.now();
        const sampler = setInterval(() => {
          peakMb = Math.max(peakMb, peakRssMbOf(child.pid!) ?? 0);
          cpu = cpuSecondsOf(child.pid!) ?? cpu;
        }, 20);
        child.stdout.on('data', (d: Buffer) => {
          bytes += d.length;
          hash.update(d);
          for (const b of d) if (b === 10) lines++;
        });
        child.stderr.on('data', (d) => (stderr += String(d)));
        child.on('error', reject);
        child.on('exit', (code) => {
          clearInterval(sampler);
          const seconds = (performance.now() - t0) / 1000;
          if (code !== 0) reject(new Error(`cli export exited ${code}: ${stderr.slice(-500)}`));
          else resolve({ bytes, lines, peakMb, cpu, seconds, stderr, sha256: hash.digest('hex') });
        });
      },
    );
  const idle = await run(new Date(until.getTime() - 3_600_000 * 24 * 3650), new Date(until.getTime() - 3_600_000 * 24 * 3650 + 3_600_000));
  const full = await run(since, until);
  // The CSV's header line is not a row; the summary on stderr says how many rows were written.
  const rows = Number(/exported (\d+)/.exec(full.stderr)?.[1] ?? full.lines - 1);
  // The process's start-up and connection are the export of no rows' time: rows/s over what the rows added.
  const seconds = Math.max(full.seconds - idle.seconds, 0.001);
  return {
    rows,
    rowsPerSecond: rows / seconds,
    peakRssMb: full.peakMb,
    idleRssMb: idle.peakMb,
    seconds,
    idleSeconds: idle.seconds,
    rowsPerCpuSecond: rows / Math.max(full.cpu - idle.cpu, 0.01),
    compiled,
    sha256: full.sha256,
  };
}

/** N fresh events of the merchant relayed by the real relay (its delivery rows), then delivered once each. */
export async function measureWebhooks(t: Target, n: number): Promise<{ relayPerSecond: number; deliveryPerSecond: number }> {
  await sql`insert into outbox_events (id, merchant_id, mode, type, aggregate_id, payload)
    select 'evt_bench' || g || ${randomBytes(3).toString('hex')}, ${t.merchant.merchantId}, 'test', 'payment.completed', 'cs_bench' || g,
      jsonb_build_object('id', 'evt_bench' || g, 'type', 'payment.completed', 'created_at', 0,
        'data', jsonb_build_object('object', jsonb_build_object('amount', '19.99', 'status', 'completed', 'session_id', 'cs_bench' || g)))
    from generate_series(1, ${n}) g`.execute(t.db);
  const queue = { addBulk: async () => [] } as unknown as Parameters<typeof relayBatch>[1];
  const t0 = performance.now();
  for (let k = 1; k > 0; ) k = await relayBatch(t.db, queue, 500);
  const relaySeconds = (performance.now() - t0) / 1000;
  const pending = await t.db
    .selectFrom('webhook_deliveries')
    .select(['event_id', 'merchant_id'])
    .where('status', '=', 'pending')
    .where('merchant_id', '=', t.merchant.merchantId)
    .execute();
  const t1 = performance.now();
  for (let i = 0; i < pending.length; i += 200)
    await recordAttempts(
      t.db,
      pending.slice(i, i + 200).map((d) => ({
        eventId: d.event_id,
        merchantId: d.merchant_id,
        generation: 0,
        url: 'https://shop.example/hooks',
        statusCode: 200,
        error: null,
        latencyMs: 85,
        excerpt: '{"received":true}',
        outcome: 'delivered' as const,
        attempted: true,
      })),
    );
  const deliverySeconds = (performance.now() - t1) / 1000;
  return { relayPerSecond: n / relaySeconds, deliveryPerSecond: pending.length / deliverySeconds };
}

/** The signed API's queries (create, get, list, refunds, exports) EXPLAINed: every Seq Scan on a table above `minRows`. */
export async function queryPlanOffenders(t: Target, minRows: number): Promise<{ statements: number; offenders: string[] }> {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 2 });
  const app = await serverFor(t.db, redis);
  const recorder = recordQueries();
  const call = (label: string, method: 'GET' | 'POST', path: string, body?: object) =>
    recorder.traced(label, async () => {
      const s = signed(t.merchant, method, path, body ? JSON.stringify(body) : '');
      const r = await app.inject({ method, url: path, payload: s.body, headers: s.headers });
      if (r.statusCode >= 400 && r.statusCode !== 404) throw new Error(`${label}: ${r.statusCode} ${r.body}`);
      return r;
    });
  try {
    const created = await call('POST /checkout/sessions/create', 'POST', '/api/v1/checkout/sessions/create', {
      amount: '10.00',
      currency: 'USD',
      order_id: `plan-${randomUUID()}`,
    });
    const id = (created.json() as { id: string }).id;
    await call('GET /checkout/sessions/:id', 'GET', `/api/v1/checkout/sessions/${id}`);
    await call('GET /checkout/sessions', 'GET', '/api/v1/checkout/sessions?page=1&page_size=20');
    await call('GET /checkout/sessions?status', 'GET', '/api/v1/checkout/sessions?status=paid');
    await call('GET /checkout/sessions?order_id', 'GET', '/api/v1/checkout/sessions?order_id=order-20');
    await call('GET /refunds', 'GET', '/api/v1/refunds?page=1&page_size=20');
    await call('GET /subscriptions', 'GET', '/api/v1/subscriptions?limit=10');
    await call('GET /invoices', 'GET', '/api/v1/invoices?limit=10');
    const since = Math.floor(Date.now() / 1000) - 31 * 86_400;
    for (const kind of ['sessions', 'payments', 'refunds', 'invoices', 'charges'])
      await call(`GET /exports/${kind}`, 'GET', `/api/v1/exports/${kind}?since=${since}&format=json`);
  } finally {
    recorder.restore();
    await app.close();
    redis.disconnect();
  }
  const statements = explainable(recorder.captured(), /^\s*(select|insert|update|delete|with)\b/i);
  const large = await largeTables(t.db, minRows);
  return { statements: statements.length, offenders: await seqScanOffenders(t.url, statements, large) };
}
