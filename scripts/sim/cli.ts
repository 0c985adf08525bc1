import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type SimEnvironment, startEnvironment } from './environment.js';
import { SIM_NETWORKS, type SimNetwork } from './env/chain.js';
import { invariants } from './invariants/index.js';
import { buildMutantTree, findMutant } from './mutants.js';
import { shrinkWithStats } from './shrink.js';
import { addPhases, formatPhases } from './phases.js';
import { countByKind } from './schedule.js';
import { buildModeOf, prepareServiceBuild } from './service-build.js';
import { runParallel } from './parallel.js';
import { reportResults } from './results-report.js';
import { activeSupervisors } from './supervisor.js';
import { runSeed, type SeedOptions, type SeedResult } from './seed.js';
import { seedLines } from './seed-lines.js';

// `npm run sim -- --seeds N [--seed S] [--minutes M] [--shrink]` (issue #20, docs/simulation.md): runs seeds S, S+1, …
// (or the --seed list) until N seeds ran or M minutes passed, one line per seed, then the totals: seeds passed and
// failed, wall time, seeds per minute, faults injected by kind. A failing seed prints its replay command and the file
// holding its event log; with --shrink, the schedule is cut down to fewer faults that still fail.

const say = (line = '') => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seeds: { type: 'string' },
      seed: { type: 'string', multiple: true },
      minutes: { type: 'string' },
      shrink: { type: 'boolean', default: false },
      /** A schedule (JSON ScheduledFault[]) instead of the seed's own: replays a shrunk schedule. */
      faults: { type: 'string' },
      'active-seconds': { type: 'string', default: '20' },
      'drain-seconds': { type: 'string', default: '120' },
      networks: { type: 'string', default: 'ethereum,bsc' },
      intensity: { type: 'string', default: '1' },
      out: { type: 'string', default: join(tmpdir(), 'stablepay-sim') },
      /** Runs the roles from a deliberately broken copy of the project (scripts/sim/mutants.ts). */
      mutant: { type: 'string' },
      /** Exit 0 only if every seed failed with an invariant violation (a mutant was caught), 1 otherwise. */
      'expect-violation': { type: 'boolean', default: false },
      /** As --expect-violation, and the violations of every seed must include this invariant. */
      'expect-invariant': { type: 'string' },
      /** How the roles run: `tsx` (the sources) or `dist` (compiled once for this run); default SIM_SERVICE_BUILD or tsx. */
      build: { type: 'string' },
      /** Every role holds HD_MNEMONIC and signs in process (the old topology): no signer process, no signer faults. */
      'in-process-signer': { type: 'boolean', default: false },
      /** Seconds between rounds of the continuous invariants during a seed (0: only at the end). */
      'check-every': { type: 'string', default: '3' },
      /** Shards side by side, each with its own environment, the seeds dealt among them (parallel.ts). */
      parallel: { type: 'string' },
      /** The results file (JSONL, one line per seed) of a parallel run; --resume continues one. */
      results: { type: 'string' },
      resume: { type: 'string' },
      /** Prints the combined report of a results file and runs nothing (the seeds of --seeds/--seed, or all in it). */
      report: { type: 'string' },
    },
  });
  const seedList = (values.seed ?? []).flatMap((s) => s.split(',')).map((s) => Number(s.trim()));
  if (seedList.some((s) => !Number.isInteger(s) || s < 0)) throw new Error('--seed takes non-negative integers');
  const count = values.seeds ? Number(values.seeds) : Math.max(seedList.length, 1);
  const first = seedList.length === 1 ? seedList[0]! : 1;
  const seeds = seedList.length > 1 ? seedList : Array.from({ length: count }, (_, i) => first + i);
  const deadline = values.minutes ? Date.now() + Number(values.minutes) * 60_000 : Number.POSITIVE_INFINITY;
  const networks = values.networks.split(',').map((n) => n.trim()) as SimNetwork[];
  if (networks.length === 0 || networks.some((n) => !SIM_NETWORKS.includes(n)) || new Set(networks).size !== networks.length)
    throw new Error(`--networks: a comma-separated list of ${SIM_NETWORKS.join(', ')}`);
  const options: Omit<SeedOptions, 'runIndex'> = {
    activeMs: Number(values['active-seconds']) * 1000,
    drainMs: Number(values['drain-seconds']) * 1000,
    networks,
    intensity: Number(values.intensity),
    invariants,
    continuousMs: Number(values['check-every']) * 1000,
    ...(values['in-process-signer'] ? { inProcessSigner: true } : {}),
    // A broken build's check: once the continuous checks found the expected invariant, waiting out the drain bound
    // (a mutant's refunds never settle) proves nothing more.
    ...(values['expect-invariant'] ? { stopDrainOn: values['expect-invariant'] } : {}),
    ...(values.faults ? { faults: JSON.parse(values.faults) as SeedOptions['faults'] } : {}),
  };

  if (values.report !== undefined) {
    const explicit = values.seeds !== undefined || values.seed !== undefined;
    process.exit(reportResults(values.report, explicit ? seeds : undefined, say));
  }

  const buildMode = buildModeOf(values.build);
  // --- parallel run (scripts/sim/parallel.ts): K shards, a results file, a resumable combined report ---
  if (values.parallel !== undefined || values.results !== undefined || values.resume !== undefined) {
    const parallel = Number(values.parallel ?? '1');
    if (!Number.isInteger(parallel) || parallel < 1) throw new Error('--parallel takes a positive integer');
    const alone = (['shrink', 'faults', 'mutant', 'expect-violation', 'expect-invariant'] as const).filter((k) => values[k]);
    if (alone.length) throw new Error(`--parallel / --results / --resume do not combine with --${alone.join(', --')}`);
    if (values.results && values.resume) throw new Error('--results or --resume, not both');
    process.exit(
      await runParallel({
        seeds,
        parallel,
        deadline,
        networks,
        options: {
          activeMs: options.activeMs,
          drainMs: options.drainMs,
          networks,
          intensity: options.intensity,
          continuousMs: options.continuousMs,
          ...(options.inProcessSigner ? { inProcessSigner: true } : {}),
        },
        buildMode,
        outDir: values.out,
        resultsFile: values.resume ?? values.results ?? join(values.out, `results-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`),
        resume: values.resume !== undefined,
        config: {
          activeSeconds: values['active-seconds'],
          drainSeconds: values['drain-seconds'],
          networks: values.networks,
          intensity: values.intensity,
          checkEvery: values['check-every'],
          signer: values['in-process-signer'] ? 'in-process' : 'remote',
        },
        say,
      }),
    );
  }
  // --- end of the parallel run ---
  const mutant = values.mutant ? findMutant(values.mutant) : undefined;
  const mutantTree = mutant ? buildMutantTree(process.cwd(), mutant) : undefined;
  if (mutant && mutantTree) {
    say(`mutant ${mutant.name}: ${mutant.breaks}`);
    say(`  roles run from ${mutantTree.dir}`);
  }

  const started = Date.now();
  say(
    `simulator: starting PostgreSQL, Redis and ${networks.join(', ')} (private instances)` +
      (buildMode === 'dist' ? `, compiling the roles${mutant ? ' (the mutated copy)' : ''}…` : '…'),
  );
  // The roles' compiled build (if asked) is made while the environment starts; the build of a mutant is the mutated copy.
  const [envResult, buildResult] = await Promise.allSettled([
    startEnvironment({ networks, outDir: values.out }),
    prepareServiceBuild(mutantTree?.dir ?? process.cwd(), buildMode),
  ]);
  if (envResult.status === 'rejected' || buildResult.status === 'rejected') {
    if (envResult.status === 'fulfilled') await envResult.value.stop();
    if (buildResult.status === 'fulfilled') buildResult.value.remove();
    mutantTree?.remove();
    throw envResult.status === 'rejected' ? envResult.reason : (buildResult as PromiseRejectedResult).reason;
  }
  const env: SimEnvironment = envResult.value;
  const build = buildResult.value;
  options.serviceRoot = build.cwd;
  options.serviceArgs = build.args;
  say(
    `environment up in ${((Date.now() - started) / 1000).toFixed(1)} s; roles run ` +
      (build.mode === 'dist' ? `from a build compiled alongside in ${(build.ms / 1000).toFixed(1)} s (${build.cwd})` : 'under tsx'),
  );
  const stopOnSignal = () =>
    void Promise.allSettled([...activeSupervisors].map((s) => s.stopAll()))
      .then(() => env.stop())
      .finally(() => {
        build.remove();
        mutantTree?.remove();
        process.exit(130);
      });
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  const results: SeedResult[] = [];
  const faultsByKind: Record<string, number> = {};
  const phaseTotals: Record<string, number> = {};
  const extraArgs =
    `--active-seconds ${values['active-seconds']} --networks ${values.networks} --intensity ${values.intensity}` +
    (mutant ? ` --mutant ${mutant.name}` : '') +
    (values['in-process-signer'] ? ' --in-process-signer' : '');
  const seedsStarted = Date.now();
  try {
    for (const [i, seed] of seeds.entries()) {
      if (Date.now() > deadline) break;
      const r = await runSeed(env, seed, { ...options, runIndex: i });
      results.push(r);
      countByKind(r.faults, faultsByKind);
      addPhases(phaseTotals, r.phases);
      for (const line of seedLines(r, extraArgs)) say(line);
      if (!r.ok) {
        if (values.shrink) await shrinkSeed(env, seed, r, { ...options, runIndex: 10_000 + i }, say);
      }
    }
  } finally {
    await env.stop();
    build.remove();
    mutantTree?.remove();
  }
  const failed = results.filter((r) => !r.ok);
  const minutes = (Date.now() - seedsStarted) / 60_000;
  say();
  say(
    `seeds: ${results.length} run, ${results.length - failed.length} passed, ${failed.length} failed${failed.length ? ` (${failed.map((r) => r.seed).join(', ')})` : ''}`,
  );
  say(
    `wall time: ${((Date.now() - started) / 1000).toFixed(0)} s (environment start-up included); seeds per minute: ${(results.length / minutes).toFixed(2)}; ` +
      `load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
  );
  if (results.length > 0) say(`mean per seed: ${formatPhases(phaseTotals, results.length)} (roles: ${build.mode})`);
  say(
    `faults injected by kind: ${
      Object.entries(faultsByKind)
        .sort()
        .map(([k, n]) => `${k} ${n}`)
        .join(', ') || 'none'
    }`,
  );
  const expected = values['expect-invariant'];
  if (values['expect-violation'] || expected) {
    // A seed that could not run ('runner') caught nothing: only a failed invariant counts (the named one, if given).
    const caught = results.filter((r) => r.violations.some((v) => (expected ? v.invariant === expected : v.invariant !== 'runner')));
    const missed = results.filter((r) => !caught.includes(r));
    say(
      missed.length === 0 && results.length > 0
        ? `expected violations: every seed failed${expected ? ` with ${expected}` : ''}${mutant ? ` (mutant ${mutant.name} caught)` : ''}`
        : `expected violations: NOT caught by seed(s) ${missed.map((r) => r.seed).join(', ') || '(none ran)'}`,
    );
    process.exit(missed.length === 0 && results.length > 0 ? 0 : 1);
  }
  process.exit(failed.length > 0 ? 1 : 0);
}

async function shrinkSeed(env: SimEnvironment, seed: number, r: SeedResult, o: SeedOptions, out: (l: string) => void): Promise<void> {
  let runs = 0;
  const shrunk = await shrinkWithStats(
    r.faults,
    async (subset) => {
      runs++;
      const again = await runSeed(env, seed, { ...o, faults: subset, runIndex: o.runIndex + runs });
      return !again.ok;
    },
    { maxRuns: 30, onRun: (s, failed) => out(`    shrink run ${runs}: ${s.length} faults → ${failed ? 'still fails' : 'passes'}`) },
  );
  const smallest = shrunk.schedule;
  if (shrunk.exhausted) out('    (run budget of 30 reached: not 1-minimal)');
  out(`    shrunk to ${smallest.length} of ${r.faults.length} faults: ${JSON.stringify(smallest)}`);
  out(`    replay the shrunk schedule: npm run sim -- --seed ${seed} --faults '${JSON.stringify(smallest)}'`);
}

main().catch((err: unknown) => {
  process.stderr.write(`simulator: ${(err as Error).stack ?? err}\n`);
  process.exit(2);
});
