import { type SimEnvironment, startEnvironment } from './environment.js';
import { invariants } from './invariants/index.js';
import { runSeed } from './seed.js';
import type { FromShard, ToShard } from './shard-protocol.js';
import { activeSupervisors } from './supervisor.js';

// One shard of a parallel simulator run (parallel.ts; docs/simulation.md "Running 1,000+ seeds"): a child process that
// starts its own environment (PostgreSQL, Redis, chains: environment.ts, as one sequential invocation does), then runs
// the seeds the runner deals it one at a time and sends back each result without its event list (written to the seed's
// event log as always). The runner owns the compiled build; a shard only runs the roles from it.

const send = (m: FromShard) => process.send?.(m);
const shard: { env?: SimEnvironment; runIndex: number; stopping: boolean } = { runIndex: 0, stopping: false };

async function stop(code: number): Promise<never> {
  if (!shard.stopping) {
    shard.stopping = true;
    await Promise.allSettled([...activeSupervisors].map((s) => s.stopAll()));
    await shard.env?.stop();
  }
  process.exit(code);
}

async function handle(m: ToShard): Promise<void> {
  if (m.type === 'start') {
    const started = Date.now();
    shard.env = await startEnvironment({ networks: m.networks, outDir: m.outDir });
    send({ type: 'ready', ms: Date.now() - started });
  } else if (m.type === 'seed') {
    if (!shard.env) throw new Error('a seed before the environment started');
    const { events: _events, ...result } = await runSeed(shard.env, m.seed, { ...m.options, invariants, runIndex: shard.runIndex++ });
    send({ type: 'result', seed: m.seed, result });
  } else await stop(0);
}

process.on('message', (m: ToShard) => {
  handle(m).catch((err: unknown) => send({ type: 'error', message: (err as Error).stack ?? String(err) }));
});
// The runner gone (killed, or its IPC closed): nothing will deal more seeds; stop the environment.
process.on('disconnect', () => void stop(1));
process.once('SIGINT', () => void stop(130));
process.once('SIGTERM', () => void stop(130));
