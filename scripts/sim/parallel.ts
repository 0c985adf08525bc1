import { type ChildProcess, fork } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dealSeeds, seedsToRun } from './dealer.js';
import type { SimNetwork } from './env/chain.js';
import { appendRecord, configMismatch, currentCommit, readRecords } from './results-file.js';
import { combineRecords, formatReport, type RunConfig, type SeedRecord } from './run-report.js';
import { countByKind } from './schedule.js';
import { seedLines, type SeedSummary } from './seed-lines.js';
import { type BuildMode, prepareServiceBuild, type ServiceBuild } from './service-build.js';
import type { FromShard, ShardSeedOptions, ToShard } from './shard-protocol.js';

// `npm run sim -- --seeds 1000 --seed 1 --parallel K [--minutes M] [--build dist] [--results F | --resume F]`
// (docs/simulation.md "Running 1,000+ seeds"): K shards side by side, each a child process (shard.ts) with its own
// private PostgreSQL, Redis and chains; the seeds are dealt from one queue (dealer.ts: each shard takes the next seed
// when it finishes one, so every seed runs exactly once); the service is compiled once for all shards (`--build dist`).
// Each finished seed prints its lines and is appended to the results file (JSONL, run-report.ts); the run ends with the
// combined report of every record in the file for this run's seeds, so a run resumed in another session reports the
// whole range and which commit each seed ran on.

const SHARD = join(dirname(fileURLToPath(import.meta.url)), 'shard.ts');

export interface ParallelRun {
  seeds: number[];
  parallel: number;
  deadline: number;
  networks: SimNetwork[];
  options: Omit<ShardSeedOptions, 'serviceRoot' | 'serviceArgs'>;
  buildMode: BuildMode;
  outDir: string;
  resultsFile: string;
  resume: boolean;
  config: RunConfig;
  say: (line?: string) => void;
}

interface Shard {
  index: number;
  child: ChildProcess;
  /** Resolves with the next message (ready/result), rejects on an error message or the process's exit. */
  next(): Promise<FromShard>;
  send(m: ToShard): void;
}

function startShard(index: number, outDir: string): Shard {
  const log = openSync(join(outDir, `shard-${index}.log`), 'a');
  const child = fork(SHARD, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', log, log, 'ipc'], serialization: 'advanced' });
  closeSync(log);
  const waiting: Array<{ resolve: (m: FromShard) => void; reject: (e: Error) => void }> = [];
  const gone: { err?: Error } = {};
  child.on('message', (m: FromShard) => {
    const w = waiting.shift();
    if (!w) return;
    if (m.type === 'error') w.reject(new Error(`shard ${index}: ${m.message}`));
    else w.resolve(m);
  });
  child.on('exit', (code, signal) => {
    gone.err = new Error(`shard ${index} exited (${signal ?? `code ${code}`}); its output: ${join(outDir, `shard-${index}.log`)}`);
    for (const w of waiting.splice(0)) w.reject(gone.err);
  });
  return {
    index,
    child,
    next: () => (gone.err ? Promise.reject(gone.err) : new Promise((resolve, reject) => waiting.push({ resolve, reject }))),
    send: (m) => {
      if (child.connected) child.send(m);
    },
  };
}

async function stopShards(shards: Shard[], signal?: NodeJS.Signals): Promise<void> {
  await Promise.all(
    shards.map(
      (s) =>
        new Promise<void>((resolve) => {
          if (s.child.exitCode !== null || s.child.signalCode !== null) return resolve();
          const force = setTimeout(() => s.child.kill('SIGKILL'), 90_000);
          s.child.once('exit', () => {
            clearTimeout(force);
            resolve();
          });
          if (signal) s.child.kill(signal);
          else s.send({ type: 'stop' });
        }),
    ),
  );
}

function recordOf(r: SeedSummary, shard: number, commit: string, config: RunConfig): SeedRecord {
  const faults: Record<string, number> = {};
  countByKind(r.faults, faults);
  return {
    seed: r.seed,
    ok: r.ok,
    wallMs: r.wallMs,
    phases: r.phases,
    faults,
    violations: r.violations.slice(0, 20),
    shard,
    commit,
    finishedAt: new Date().toISOString(),
    load1: Number(loadavg()[0]!.toFixed(2)),
    config,
    eventsFile: r.eventsFile,
    logFile: r.logFile,
  };
}

/** Runs the seeds on `parallel` shards; returns the exit status (1 when a seed of the run failed). */
export async function runParallel(p: ParallelRun): Promise<number> {
  const { say } = p;
  mkdirSync(p.outDir, { recursive: true });
  mkdirSync(dirname(p.resultsFile), { recursive: true });
  if (!p.resume && existsSync(p.resultsFile) && statSync(p.resultsFile).size > 0)
    throw new Error(`${p.resultsFile} already holds results: --resume it, or give another --results file`);
  const { records: earlier, skipped } = p.resume ? readRecords(p.resultsFile) : { records: [], skipped: 0 };
  const mismatch = configMismatch(earlier, p.config);
  if (mismatch) throw new Error(`--resume ${p.resultsFile}: ${mismatch}`);
  const toRun = seedsToRun(
    p.seeds,
    earlier.map((r) => r.seed),
  );
  const commit = currentCommit(process.cwd());
  const started = Date.now();
  say(
    `simulator: ${p.parallel} shard(s), each with its own PostgreSQL, Redis and ${p.networks.join(', ')}; ` +
      `${toRun.length} seed(s) to run of ${p.seeds.length}` +
      (p.resume ? ` (${earlier.length} already in ${p.resultsFile}${skipped ? `, ${skipped} unreadable line(s) skipped` : ''})` : '') +
      `; commit ${commit}${p.buildMode === 'dist' ? '; compiling the roles once for all shards…' : ''}`,
  );
  say(`results: ${p.resultsFile}`);
  const shards = Array.from({ length: Math.min(p.parallel, toRun.length) }, (_, i) => startShard(i, p.outDir));
  const state: { stopping: boolean; build?: ServiceBuild } = { stopping: false };
  const records: SeedRecord[] = [];
  const finish = (seedsStarted: number): number => {
    const report = combineRecords(p.seeds, [...earlier, ...records]);
    const minutes = (Date.now() - seedsStarted) / 60_000;
    say();
    for (const line of formatReport(report)) say(line);
    say(
      `this session: ${records.length} seed(s) on ${shards.length} shard(s) in ${((Date.now() - started) / 1000).toFixed(0)} s ` +
        `(start-up included); seeds per minute ${(records.length / Math.max(minutes, 1e-9)).toFixed(2)}; load average now ` +
        loadavg()
          .map((l) => l.toFixed(1))
          .join(' '),
    );
    say(`results: ${p.resultsFile}${report.notRun.length ? ` (continue with --resume ${p.resultsFile})` : ''}`);
    return report.failed.length > 0 ? 1 : 0;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (state.stopping) return;
    state.stopping = true;
    say(`\n${signal}: stopping the shards (the seeds under way are not recorded)…`);
    void stopShards(shards, 'SIGTERM').finally(() => {
      state.build?.remove();
      finish(started);
      process.exit(130);
    });
  };
  if (shards.length === 0) return finish(started); // every seed already recorded: only the report
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const [buildResult, ...ready] = await Promise.allSettled([
    prepareServiceBuild(process.cwd(), p.buildMode),
    ...shards.map((s) => {
      const r = s.next();
      s.send({ type: 'start', networks: p.networks, outDir: p.outDir });
      return r;
    }),
  ]);
  const up = shards.filter((_, i) => ready[i]!.status === 'fulfilled');
  for (const [i, r] of ready.entries()) if (r.status === 'rejected') say(`shard ${i} did not start: ${(r.reason as Error).message}`);
  if (buildResult.status === 'rejected' || up.length === 0) {
    await stopShards(shards);
    if (buildResult.status === 'fulfilled') buildResult.value.remove();
    throw buildResult.status === 'rejected' ? buildResult.reason : new Error('no shard started');
  }
  const build = buildResult.value;
  state.build = build;
  say(
    `environments up in ${((Date.now() - started) / 1000).toFixed(1)} s; roles run ` +
      (build.mode === 'dist' ? `from one build compiled in ${(build.ms / 1000).toFixed(1)} s (${build.cwd})` : 'under tsx'),
  );
  const options: ShardSeedOptions = { ...p.options, serviceRoot: build.cwd, serviceArgs: build.args };
  const replayArgs =
    `--active-seconds ${p.config.activeSeconds} --networks ${p.config.networks} --intensity ${p.config.intensity}` +
    (p.config.signer === 'in-process' ? ' --in-process-signer' : '');
  const seedsStarted = Date.now();
  const record = (r: SeedRecord, lines: string[]) => {
    if (state.stopping) return;
    appendRecord(p.resultsFile, r);
    records.push(r);
    say(`[${earlier.length + records.length}/${p.seeds.length} shard ${r.shard}] ${lines[0]}`);
    for (const l of lines.slice(1)) say(l);
  };
  try {
    await dealSeeds(
      toRun,
      up.map((s) => async (seed: number) => {
        const reply = s.next();
        s.send({ type: 'seed', seed, options });
        const m = await reply;
        if (m.type !== 'result' || m.seed !== seed) throw new Error(`shard ${s.index}: unexpected answer ${m.type} for seed ${seed}`);
        return { shard: s.index, result: m.result };
      }),
      {
        deadline: p.deadline,
        onResult: (_seed, { shard, result }) => record(recordOf(result, shard, commit, p.config), seedLines(result, replayArgs)),
        onError: (seed, err, shard) => {
          // The shard died (or its runner threw) with the seed under way: the seed failed, and is recorded so.
          const message = (err as Error).message;
          const r: SeedRecord = {
            ...recordOf(
              {
                seed,
                ok: false,
                violations: [{ invariant: 'runner', message }],
                faults: [],
                wallMs: 0,
                phases: {},
                eventsFile: '',
                logFile: '',
                stats: { sessions: 0, refunds: 0, deliveries: 0, kills: 0, starts: 0, answers: {}, extras: '' },
              },
              up[shard]!.index,
              commit,
              p.config,
            ),
          };
          record(r, [`seed ${seed}: FAIL (shard ${up[shard]!.index} lost: ${message})`]);
        },
      },
    );
  } finally {
    if (!state.stopping) {
      await stopShards(shards);
      build.remove();
    }
  }
  if (state.stopping) return new Promise(() => {}); // the signal handler reports and exits
  return finish(seedsStarted);
}
