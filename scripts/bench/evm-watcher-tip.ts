import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';
import type { AnvilNode } from '../../test/support/anvil.js';

// The watcher benchmarks' tip phase (evm-watcher.ts, scale/measure-chain.ts): the EVM watcher of ethereum:test in its
// own process (evm-watcher-process.ts, NetworkWatcher.run() at a 1 s poll), and per run one block of payments, then the
// block that gives them their last confirmation at a random phase against the poll; measured: the time from that block
// to the last paid session's `paid` in the database, the step's parts (the child's messages), and the process's memory
// (VmRSS/VmHWM from /proc/<pid>/status: the watcher's alone). The caller's chain runs without automine.

export type ChildStep = {
  slow: string[];
  started: number;
  polled: number;
  committed: number;
  queries: number;
  rpc: number;
  paid: number;
  last: string;
  headTriggered: boolean;
};

export interface TipOptions {
  db: Db;
  dbUrl: string;
  node: AnvilNode;
  /** The USDT contract the watcher reads. */
  token: string;
  confirmations: number;
  runs: number;
  headPollMs?: string;
  /** How long the watcher's first step (its watch set's full load) may take; past it, no run is made (watched: NaN). */
  loadTimeoutMs?: number;
  /** Sends and mines run `run`'s block of payments; returns the id of the session it pays last. */
  payRun(run: number): Promise<string>;
}

export interface TipResult {
  tips: Array<{ latency: number; step?: ChildStep; minedAt: number }>;
  /** MB: modules loaded and idle; with the watch set loaded; peak (VmHWM) and at the end of the runs. */
  idleRss: number;
  loadedRss: number;
  peakRss: number;
  endRss: number;
  usage: NodeJS.MemoryUsage;
  watched: number;
  /** The first step's duration (the watch set's full load, then the first poll), ms. */
  loadMs: number;
}

export async function measureTip(o: TipOptions): Promise<TipResult> {
  await sql`delete from chain_cursors`.execute(o.db);
  const child = fork(new URL('./evm-watcher-process.ts', import.meta.url).pathname, [], {
    execArgv: [...process.execArgv, ...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [])],
    env: {
      ...process.env,
      BENCH_DATABASE_URL: o.dbUrl,
      BENCH_RPC_URL: o.node.url,
      BENCH_TOKEN: o.token,
      BENCH_CONFIRMATIONS: String(o.confirmations),
      BENCH_POLL_MS: '1000',
      BENCH_START_HEIGHT: String(await o.node.provider.getBlockNumber()),
      ...(o.headPollMs ? { BENCH_HEAD_POLL_MS: o.headPollMs } : {}),
    },
  });
  try {
    const steps: ChildStep[] = [];
    type ChildMsg = { kind: string; step?: ChildStep; watched?: number; usage?: NodeJS.MemoryUsage };
    const waiting = new Map<string, (m: ChildMsg) => void>();
    child.on('message', (m: ChildMsg) => {
      if (m.kind === 'step' && m.step) steps.push(m.step);
      waiting.get(m.kind)?.(m);
    });
    const next = (kind: string) => new Promise<ChildMsg>((ok) => waiting.set(kind, ok));
    const proc = (field: 'VmRSS' | 'VmHWM') => {
      const line = readFileSync(`/proc/${child.pid}/status`, 'utf8')
        .split('\n')
        .find((l) => l.startsWith(`${field}:`))!;
      return Number(/(\d+)/.exec(line)![1]) / 1024;
    };
    await next('ready');
    const idleRss = proc('VmRSS'); // modules loaded, database pool and adapter created, nothing watched yet
    child.send({ cmd: 'start' });
    const l0 = performance.now();
    const running = await Promise.race([
      next('running'),
      ...(o.loadTimeoutMs ? [new Promise<null>((r) => setTimeout(() => r(null), o.loadTimeoutMs))] : []),
    ]);
    const loadMs = performance.now() - l0;
    if (!running) {
      const rss = proc('VmHWM');
      return {
        tips: [],
        idleRss,
        loadedRss: Number.NaN,
        peakRss: rss,
        endRss: Number.NaN,
        usage: process.memoryUsage(),
        watched: Number.NaN,
        loadMs,
      };
    }
    const watched = running.watched!;
    const loadedRss = proc('VmRSS');

    const tips: TipResult['tips'] = [];
    for (let run = 0; run < o.runs; run++) {
      const target = await o.payRun(run);
      await new Promise((r) => setTimeout(r, 1000));
      await o.node.mine(o.confirmations - 2);
      // A random phase against the watcher's poll, as a block on a real chain has.
      await new Promise((r) => setTimeout(r, 1000 + Math.random() * 1000));
      await o.node.mine(1); // this block gives the payments their last confirmation
      const minedAt = performance.timeOrigin + performance.now();
      let latency = Number.NaN;
      for (;;) {
        const r = await sql<{
          n: bigint;
        }>`select count(*)::bigint as n from payment_sessions where status = 'paid' and id = ${target}`.execute(o.db);
        const now = performance.timeOrigin + performance.now();
        if (r.rows[0]!.n === 1n) {
          latency = now - minedAt;
          break;
        }
        if (now - minedAt > 30_000) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      // The step's message follows its commit.
      for (const end = Date.now() + 5000; !steps.some((x) => x.last === target) && Date.now() < end; )
        await new Promise((r) => setTimeout(r, 20));
      tips.push({ latency, step: steps.find((x) => x.last === target), minedAt });
    }
    const peakRss = proc('VmHWM');
    const endRss = proc('VmRSS');
    child.send({ cmd: 'memory' });
    const usage = (await next('memory')).usage!;
    if (process.env.BENCH_HEAP) {
      child.send({ cmd: 'heap', path: process.env.BENCH_HEAP });
      await next('heap');
    }
    child.send({ cmd: 'stop' });
    await next('stopped');
    await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
    return { tips, idleRss, loadedRss, peakRss, endRss, usage, watched, loadMs };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}
