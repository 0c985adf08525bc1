import { writeHeapSnapshot } from 'node:v8';
import pg from 'pg';
import { EvmChainAdapter } from '../../chains/evm/adapter.js';
import type { ChainAdapter } from '../../chains/types.js';
import { createDb } from '../../src/db/database.js';
import { NetworkWatcher } from '../../src/watcher/network-watcher.js';

// The EVM watcher of the watcher benchmark (scripts/bench/evm-watcher.ts) in its own process, so that its memory is
// the watcher's alone (the parent reads VmHWM/VmRSS from /proc/<pid>/status) and its steps can be timed. It runs
// NetworkWatcher.run() exactly as the service does, and tells the parent, for every committed step, when it started,
// when the chain poll (RPC calls and the watch-set sync) returned, when the database transaction committed, how many
// pg queries the step made, and which sessions it paid.
const e = process.env;
const counter = { queries: 0, slow: [] as Array<{ ms: number; sql: string }> };
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
  counter.queries++;
  const t0 = performance.now();
  const r = (query as (...x: unknown[]) => unknown).apply(this, a);
  const text = typeof a[0] === 'string' ? a[0] : String((a[0] as { text?: string })?.text ?? '');
  if (r instanceof Promise) {
    r.then(
      () => {
        const ms = performance.now() - t0;
        if (ms >= 20) counter.slow.push({ ms, sql: text.replace(/\s+/g, ' ').slice(0, 90) });
      },
      () => {},
    );
  }
  return r;
} as typeof query;

const at = () => performance.timeOrigin + performance.now();
const db = createDb(e.BENCH_DATABASE_URL!, 10);
const adapter = new EvmChainAdapter({
  network: 'ethereum',
  mode: 'test',
  rpcUrl: e.BENCH_RPC_URL!,
  rpcTimeoutMs: 30_000,
  tokens: [{ symbol: 'USDT', address: e.BENCH_TOKEN!, decimals: 6 }],
  confirmation: { kind: 'depth', confirmations: Number(e.BENCH_CONFIRMATIONS) },
  maxBlockRange: 50,
});
type Step = {
  slow: string[];
  started: number;
  polled: number;
  committed: number;
  queries: number;
  paid: string[];
  rpc: number;
  headTriggered: boolean;
};
const current = { started: 0, polled: 0, queries: 0, rpc: 0, headTriggered: false };
const poll = adapter.pollTransfers.bind(adapter);
adapter.pollTransfers = async (...a: Parameters<ChainAdapter['pollTransfers']>) => {
  current.started = at();
  current.queries = counter.queries;
  current.rpc = adapter.rpc.totalCalls;
  counter.slow = [];
  const r = await poll(...a);
  current.polled = at();
  return r;
};
const watcher = new NetworkWatcher({
  db,
  adapter,
  pollIntervalMs: Number(e.BENCH_POLL_MS),
  ...(e.BENCH_HEAD_POLL_MS ? { headPollMs: Number(e.BENCH_HEAD_POLL_MS) } : {}),
  startHeight: BigInt(e.BENCH_START_HEIGHT!),
  onHeadMoved: () => {
    current.headTriggered = true;
  },
  onCommitted: (r) => {
    const step: Step = {
      started: current.started,
      polled: current.polled,
      committed: at(),
      queries: counter.queries - current.queries,
      rpc: adapter.rpc.totalCalls - current.rpc,
      paid: r.paidSessionIds,
      headTriggered: current.headTriggered,
      slow: counter.slow.map((q) => `${q.ms.toFixed(0)} ms ${q.sql}`),
    };
    current.headTriggered = false;
    if (step.paid.length > 0 || e.BENCH_ALL_STEPS)
      process.send?.({ kind: 'step', step: { ...step, paid: step.paid.length, last: step.paid.at(-1) } });
  },
});

type Msg = { cmd: 'start' } | { cmd: 'stop' } | { cmd: 'heap'; path: string } | { cmd: 'memory' };
const stop = new AbortController();
const box: { running: Promise<void> | null } = { running: null };
process.on('message', async (m: Msg) => {
  if (m.cmd === 'start') {
    await watcher.step(); // the first step loads the whole watch set
    box.running = watcher.run(stop.signal);
    process.send?.({ kind: 'running', watched: watcher.watch.size });
  } else if (m.cmd === 'memory') {
    process.send?.({ kind: 'memory', usage: process.memoryUsage() });
  } else if (m.cmd === 'heap') {
    writeHeapSnapshot(m.path);
    process.send?.({ kind: 'heap', path: m.path });
  } else if (m.cmd === 'stop') {
    stop.abort();
    await box.running;
    await db.destroy();
    process.send?.({ kind: 'stopped' }, () => process.exit(0));
  }
});
process.send?.({ kind: 'ready' });
