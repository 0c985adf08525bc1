import { fork } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import autocannon from 'autocannon';
import Fastify, { type FastifyInstance } from 'fastify';
import { instrumentHttp } from '../../src/metrics/http.js';
import { startPrivateRedis } from '../../test/support/private-redis.js';
import { signedRequest } from './signed-request.js';

// Signed create-session and get-session on loopback, beside a bare Fastify route measured in the same run.
// Prints req/s, the ratio to the bare route, and p99 latency at half the measured maximum rate; then the cost of HTTP
// metrics: the same API with metrics on (scraped every second) against off, in off/on/on/off order to cancel drift.
// The composed limit: the bare route, a Postgres transaction inserting a session and an outbox row, a primary-key select
// and a Redis SET, each measured in the same run; a request doing each once is bounded by 1/(Σ 1/x) (create: bare +
// transaction + SET; get: bare + select + SET), and the signed routes are printed as a ratio to it.
// Transport (--transport): `unix` (the default where PostgreSQL's socket exists) reaches PostgreSQL and Redis over Unix-domain sockets, as a single-host
// deployment does (DATABASE_URL `?host=/var/run/postgresql`, REDIS_URL `unix:///path`); `tcp` over loopback TCP. Redis is
// a private redis-server listening on both; the composed limit's baselines use the server's own pool and connection, so
// the same transport as the requests they bound.
// Usage: npm run bench:api [-- --seconds 10 --connections 32 --transport unix|tcp --metrics-cost off]. Not a CI gate. BENCH_OUT=file
// writes a JSON summary.

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const seconds = Number(args.get('seconds') ?? 10);
const connections = Number(args.get('connections') ?? 32);
const pgSocketDir = process.env.BENCH_PG_SOCKET_DIR ?? '/var/run/postgresql';
const benchDb = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/stablepay_bench';
// Unix sockets by default where PostgreSQL has one (its socket file in BENCH_PG_SOCKET_DIR), else TCP.
const pgSocket = `${pgSocketDir}/.s.PGSQL.${new URL(benchDb).port || 5432}`;
const transport = args.get('transport') ?? (existsSync(pgSocket) ? 'unix' : 'tcp');
if (transport !== 'unix' && transport !== 'tcp') throw new Error('--transport is unix or tcp');
const privateRedis = await startPrivateRedis({ unixSocket: true });
const serverEnv = {
  ...process.env,
  REDIS_URL: transport === 'unix' ? privateRedis.socketUrl! : privateRedis.url,
  BENCH_DATABASE_URL: transport === 'unix' ? viaSocket(benchDb, pgSocketDir) : benchDb,
};
/** The same database through the server's Unix-domain socket directory (pg reads `host` from the query string). */
function viaSocket(url: string, dir: string): string {
  const u = new URL(url);
  u.searchParams.set('host', dir);
  return u.toString();
}

interface Ready {
  apiUrl: string;
  bareUrl: string;
  meteredUrl: string;
  metricsUrl: string;
  key: string;
  secret: string;
}
const child = fork(new URL('./api-server.ts', import.meta.url).pathname, [], {
  execArgv: ['--import', 'tsx', ...(process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : [])],
  stdio: 'inherit',
  env: serverEnv,
});
child.once('exit', () => void privateRedis.stop());
const ready = await new Promise<Ready>((resolve, reject) => {
  child.once('message', (m) => resolve(m as Ready));
  child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
});

let seq = 0;
const signed = (method: 'GET' | 'POST', path: string, body: string) => signedRequest(ready, method, path, body);
const createRequest = () =>
  signed(
    'POST',
    '/api/v1/checkout/sessions/create',
    JSON.stringify({ amount: '19.99', currency: 'USD', order_id: `bench-${process.pid}-${seq++}` }),
  );

// One session to read back in the get benchmark.
const created = await fetch(`${ready.apiUrl}/api/v1/checkout/sessions/create`, createRequest() as RequestInit);
const sessionId = ((await created.json()) as { id: string }).id;
const getRequest = () => signed('GET', `/api/v1/checkout/sessions/${sessionId}`, '');

async function run(name: string, url: string, make: () => object, overallRate?: number) {
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    overallRate,
    requests: [{ setupRequest: (req: object) => ({ ...req, ...make() }) }],
  });
  const bad = result.non2xx + result.errors + result.timeouts;
  return {
    name,
    rps: result.requests.average,
    total: result.requests.total,
    sent: result.requests.sent,
    p50: result.latency.p50,
    p99: result.latency.p99,
    bad,
  };
}

// CPU time the server process spends per request: unlike req/s, it barely moves when other work shares the cores. With
// it, the pg statements and Redis commands the server sent per request (counted in api-server.ts).
interface Counters {
  cpuMicros: number;
  pgStatements: number;
  redisCommands: number;
  pgWrites: number;
  redisWrites: number;
}
const serverCounters = () =>
  new Promise<Counters>((resolve) => {
    const on = (m: unknown) => {
      if (m && typeof m === 'object' && 'cpuMicros' in m) {
        child.off('message', on);
        resolve(m as Counters);
      }
    };
    child.on('message', on);
    child.send('cpu');
  });
const measured = async (r: () => Promise<Awaited<ReturnType<typeof run>>>) => {
  const c0 = await serverCounters();
  const res = await r();
  const c1 = await serverCounters();
  // Divided by the requests sent: those still in flight when a run ends were served too, not counted in its total.
  const per = (k: keyof Counters) => (c1[k] - c0[k]) / Math.max(1, res.sent);
  return {
    ...res,
    cpuPerReq: per('cpuMicros'),
    pgPerReq: per('pgStatements'),
    redisPerReq: per('redisCommands'),
    pgWritesPerReq: per('pgWrites'),
    redisWritesPerReq: per('redisWrites'),
  };
};

const rows = [];
const bareGet = await run('bare GET', ready.bareUrl, () => ({ method: 'GET', path: '/bare' }));
// The load generator signs every request too: this run shows its own ceiling on this machine.
const bareSigned = await run('bare POST, signed client', ready.bareUrl, () => ({ ...createRequest(), path: '/bare' }));
const base = await new Promise<{ insertTx: number; pkSelect: number; redisSet: number }>((resolve) => {
  const on = (m: unknown) => {
    if (m && typeof m === 'object' && 'baselines' in m) {
      child.off('message', on);
      resolve((m as { baselines: { insertTx: number; pkSelect: number; redisSet: number } }).baselines);
    }
  };
  child.on('message', on);
  child.send({ baselines: { seconds, concurrency: Math.min(connections, 16), sessionId } });
});
const composedCreate = 1 / (1 / bareGet.rps + 1 / base.insertTx + 1 / base.redisSet);
const composedGet = 1 / (1 / bareGet.rps + 1 / base.pkSelect + 1 / base.redisSet);
const create = await measured(() => run('signed create-session', ready.apiUrl, createRequest));
const get = await measured(() => run('signed get-session', ready.apiUrl, getRequest));
rows.push(bareGet, bareSigned, create, get);
const createHalf = await run('create @ half rate', ready.apiUrl, createRequest, Math.max(1, Math.floor(create.rps / 2)));
const getHalf = await run('get @ half rate', ready.apiUrl, getRequest, Math.max(1, Math.floor(get.rps / 2)));
rows.push(createHalf, getHalf);

console.log(
  `\nAPI benchmark: ${seconds}s per run, ${connections} connections, HTTP on loopback, real Postgres and Redis over ${transport === 'unix' ? 'Unix-domain sockets' : 'loopback TCP'}`,
);
console.log(
  'run'.padEnd(26),
  'req/s'.padStart(9),
  'vs bare'.padStart(9),
  'p50 ms'.padStart(8),
  'p99 ms'.padStart(8),
  'non-2xx'.padStart(8),
);
for (const r of rows) {
  console.log(
    r.name.padEnd(26),
    r.rps.toFixed(0).padStart(9),
    (r.rps / bareGet.rps).toFixed(3).padStart(9),
    String(r.p50).padStart(8),
    String(r.p99).padStart(8),
    String(r.bad).padStart(8),
  );
}
console.log(
  `\nbaselines (same run): pg insert transaction ${base.insertTx.toFixed(0)}/s, pk select ${base.pkSelect.toFixed(0)}/s, Redis SET ${base.redisSet.toFixed(0)}/s, bare GET ${bareGet.rps.toFixed(0)}/s`,
);
for (const r of [create, get]) {
  console.log(
    `${r.name}, per request in the server: ${r.pgPerReq.toFixed(2)} pg statements (${r.pgWritesPerReq.toFixed(2)} socket write calls, corked by pg into one writev per statement), ${r.redisPerReq.toFixed(2)} Redis commands (${r.redisWritesPerReq.toFixed(2)} socket write calls), ${r.cpuPerReq.toFixed(0)} µs CPU`,
  );
}
console.log(
  `composed limit: create ${composedCreate.toFixed(0)} req/s (measured ${create.rps.toFixed(0)}, ratio ${(create.rps / composedCreate).toFixed(2)}); get ${composedGet.toFixed(0)} req/s (measured ${get.rps.toFixed(0)}, ratio ${(get.rps / composedGet).toFixed(2)}); target ratio >= 0.5`,
);
const summary = {
  figures: `create-session ${create.rps.toFixed(0)} req/s = ${(create.rps / composedCreate).toFixed(2)}× its composed limit (${composedCreate.toFixed(0)}); get-session ${get.rps.toFixed(0)} req/s = ${(get.rps / composedGet).toFixed(2)}× (${composedGet.toFixed(0)}); same run: bare GET ${bareGet.rps.toFixed(0)}/s, pg insert transaction ${base.insertTx.toFixed(0)}/s, pk select ${base.pkSelect.toFixed(0)}/s, Redis SET ${base.redisSet.toFixed(0)}/s; p99 at half rate ${createHalf.p99} / ${getHalf.p99} ms`,
  target: '≥ 0.5 × composed limit (create and get)',
  met: create.rps / composedCreate >= 0.5 && get.rps / composedGet >= 0.5,
  seconds,
  connections,
  transport,
  bare_get_rps: Math.round(bareGet.rps),
  pg_insert_tx_per_s: Math.round(base.insertTx),
  pk_select_per_s: Math.round(base.pkSelect),
  redis_set_per_s: Math.round(base.redisSet),
  create: {
    rps: Math.round(create.rps),
    composed_limit: Math.round(composedCreate),
    ratio: Number((create.rps / composedCreate).toFixed(2)),
    p99_half_rate_ms: createHalf.p99,
    non_2xx: create.bad,
    pg_statements_per_request: Number(create.pgPerReq.toFixed(2)),
    redis_commands_per_request: Number(create.redisPerReq.toFixed(2)),
    redis_socket_write_calls_per_request: Number(create.redisWritesPerReq.toFixed(2)),
    pg_socket_write_calls_per_request: Number(create.pgWritesPerReq.toFixed(2)),
    server_cpu_us_per_request: Math.round(create.cpuPerReq),
  },
  get: {
    rps: Math.round(get.rps),
    composed_limit: Math.round(composedGet),
    ratio: Number((get.rps / composedGet).toFixed(2)),
    p99_half_rate_ms: getHalf.p99,
    non_2xx: get.bad,
    pg_statements_per_request: Number(get.pgPerReq.toFixed(2)),
    redis_commands_per_request: Number(get.redisPerReq.toFixed(2)),
    redis_socket_write_calls_per_request: Number(get.redisWritesPerReq.toFixed(2)),
    pg_socket_write_calls_per_request: Number(get.pgWritesPerReq.toFixed(2)),
    server_cpu_us_per_request: Math.round(get.cpuPerReq),
  },
};
if (process.env.BENCH_OUT) writeFileSync(process.env.BENCH_OUT, JSON.stringify(summary));
// --metrics-cost off: the main table alone (alternated old/new comparisons of the signed routes).
if (args.get('metrics-cost') === 'off') {
  child.send('stop');
} else {
  await metricsCost();
  child.send('stop');
}

async function metricsCost() {
  // Metrics on vs off, per endpoint in off, on, on, off order (drift over the run cancels out).
  const scraping = async <T>(f: () => Promise<T>): Promise<T> => {
    const timer = setInterval(
      () =>
        void fetch(ready.metricsUrl)
          .then((r) => r.text())
          .catch(() => {}),
      1000,
    );
    try {
      return await f();
    } finally {
      clearInterval(timer);
    }
  };
  const cost = [];
  for (const [name, make] of [
    ['create-session', createRequest],
    ['get-session', getRequest],
  ] as const) {
    const off1 = await measured(() => run(`${name}, metrics off`, ready.apiUrl, make));
    const on1 = await measured(() => scraping(() => run(`${name}, metrics on`, ready.meteredUrl, make)));
    const on2 = await measured(() => scraping(() => run(`${name}, metrics on`, ready.meteredUrl, make)));
    const off2 = await measured(() => run(`${name}, metrics off`, ready.apiUrl, make));
    const off = (off1.rps + off2.rps) / 2;
    const on = (on1.rps + on2.rps) / 2;
    const cpuOff = (off1.cpuPerReq + off2.cpuPerReq) / 2;
    const cpuOn = (on1.cpuPerReq + on2.cpuPerReq) / 2;
    cost.push({
      name,
      off,
      on,
      costPct: ((off - on) / off) * 100,
      cpuOff,
      cpuOn,
      cpuCostPct: ((cpuOn - cpuOff) / cpuOff) * 100,
      bad: off1.bad + on1.bad + on2.bad + off2.bad,
    });
  }
  const scrape = await (await fetch(ready.metricsUrl)).text();
  console.log('\nHTTP metrics cost (off/on/on/off, each run %ds; on = instrumented and scraped every second)', seconds);
  console.log(
    'endpoint'.padEnd(16),
    'off req/s'.padStart(10),
    'on req/s'.padStart(10),
    'cost %'.padStart(8),
    'off µs CPU/req'.padStart(15),
    'on µs CPU/req'.padStart(14),
    'CPU cost %'.padStart(11),
    'non-2xx'.padStart(8),
  );
  for (const c of cost) {
    console.log(
      c.name.padEnd(16),
      c.off.toFixed(0).padStart(10),
      c.on.toFixed(0).padStart(10),
      c.costPct.toFixed(1).padStart(8),
      c.cpuOff.toFixed(0).padStart(15),
      c.cpuOn.toFixed(0).padStart(14),
      c.cpuCostPct.toFixed(1).padStart(11),
      String(c.bad).padStart(8),
    );
  }
  console.log(
    `target: cost < 5% (server CPU per request: ${cost.every((c) => c.cpuCostPct < 5) ? 'met' : 'NOT met'}; req/s: ${cost.every((c) => c.costPct < 5) ? 'met' : 'NOT met'}, which moves with other load on the machine); ${scrape.split('\n').filter((l) => l.startsWith('stablepay_http_requests_total')).length} request series exported`,
  );
  // The hook alone, without the network and the shared machine's noise: CPU per request of a trivial route on two
  // in-process Fastify apps, with and without instrumentHttp, interleaved, median of 9 rounds (Fastify's inject).
  {
    const app = async (metered: boolean) => {
      const a = Fastify({ logger: false });
      if (metered) instrumentHttp(a);
      a.get('/r/:id', async () => ({ ok: true }));
      await a.ready();
      return a;
    };
    const cpuPerInject = async (a: FastifyInstance, n: number) => {
      const t0 = process.cpuUsage();
      for (let i = 0; i < n; i++) await a.inject({ method: 'GET', url: '/r/abc' });
      const d = process.cpuUsage(t0);
      return (d.user + d.system) / n;
    };
    const [plain, metered] = [await app(false), await app(true)];
    await cpuPerInject(plain, 2000);
    await cpuPerInject(metered, 2000);
    const off: number[] = [];
    const on: number[] = [];
    for (let r = 0; r < 9; r++) {
      off.push(await cpuPerInject(plain, 3000));
      on.push(await cpuPerInject(metered, 3000));
    }
    const median = (x: number[]) => [...x].sort((a, b) => a - b)[Math.floor(x.length / 2)]!;
    const us = median(on) - median(off);
    const gets = cost.find((x) => x.name === 'get-session')!;
    const creates = cost.find((x) => x.name === 'create-session')!;
    console.log(
      `the hook alone: ${us.toFixed(1)} µs CPU per request (trivial route ${median(off).toFixed(1)} → ${median(on).toFixed(1)} µs) = ${((us / gets.cpuOff) * 100).toFixed(1)}% of get-session's ${gets.cpuOff.toFixed(0)} µs, ${((us / creates.cpuOff) * 100).toFixed(1)}% of create-session's ${creates.cpuOff.toFixed(0)} µs`,
    );
    const share = Math.max(us / gets.cpuOff, us / creates.cpuOff) * 100;
    console.log(
      `target: instrumentation < 5% of create/get-session's cost: ${share < 5 ? 'met' : 'NOT met'} by the hook's measured share (${share.toFixed(1)}%)`,
    );
    await plain.close();
    await metered.close();
  }
  console.log(
    `\ntargets: create >= 1500 req/s (${create.rps >= 1500 ? 'met' : 'NOT met'}), get >= 5000 req/s (${get.rps >= 5000 ? 'met' : 'NOT met'}), p99 < 20 ms at half rate (create ${createHalf.p99} ms, get ${getHalf.p99} ms)`,
  );
}
