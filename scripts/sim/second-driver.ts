import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import type { Db } from '../../src/db/database.js';
import type { Violation } from './contract.js';

// A second driver of the sweeps (issue #20; docs/simulation.md "Sweeps"): the operator's `npm run cli -- sweep run`
// started as its own OS process beside the worker role whose schedule drives the same sweeps: from a drawn moment of
// the active phase, as soon as a sweep is running (or at the phase's end if none runs), 1–3 times back to back. It plans and creates sweeps of its own (racing the worker's planning of the same deposit addresses) and
// drives every running sweep to its end, the worker's included (src/cli/treasury.ts): two drivers of one sweep step at
// once, as docs/outbound.md allows. Its output goes to the service log under `[cli <pid>]`. Its exit is an event, not a
// verdict (0: every sweep it created or resumed completed; 1: an error, or some did not complete within its wait, which
// faults make normal): the invariants judge what it did (each step moved money at most once, the journal, no job
// left). Only a usage error (2), another code, or a signal it did not get from us is a violation (`second-driver`).

export const SECOND_DRIVER = 'second-driver';

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  ms: number;
  /** The last 2,000 characters of its stderr. */
  stderr: string;
  /** Its whole stdout (the command's JSON report). */
  stdout: string;
}

/** How the CLI starts where the roles start (`src/main.ts` under tsx, or the compiled `dist/src/main.js`). */
export function cliArgsOf(serviceArgs: readonly string[]): string[] {
  return serviceArgs.map((a) => (a === 'src/main.ts' ? 'src/cli/index.ts' : a === 'dist/src/main.js' ? 'dist/src/cli/index.js' : a));
}

export interface ServiceCli {
  run(args: string[], timeoutMs: number): Promise<CliRun>;
}

export function serviceCli(o: { cwd?: string; serviceArgs: readonly string[]; env: Record<string, string>; logFile: string }): ServiceCli {
  return {
    run(args, timeoutMs) {
      const started = Date.now();
      const log = createWriteStream(o.logFile, { flags: 'a' });
      const child = spawn(process.execPath, [...cliArgsOf(o.serviceArgs), ...args], {
        ...(o.cwd ? { cwd: o.cwd } : {}),
        env: { PATH: process.env.PATH ?? '', ...o.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const tag = `[cli ${child.pid}] `;
      let stderr = '';
      let stdout = '';
      const pipe = (err: boolean) => (d: Buffer) => {
        if (err) stderr = (stderr + String(d)).slice(-2000);
        else stdout += String(d);
        for (const line of String(d).split('\n')) if (line) log.write(`${tag}${line}\n`);
      };
      child.stdout.on('data', pipe(false));
      child.stderr.on('data', pipe(true));
      // A bound of our own beyond the CLI's --wait-seconds: a hung CLI is killed (and reported as killed by us).
      const bound = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      return new Promise((resolve, reject) => {
        child.on('error', (e) => {
          clearTimeout(bound);
          log.end();
          reject(e);
        });
        child.on('exit', (code, signal) => {
          clearTimeout(bound);
          log.end();
          resolve({ code, signal, ms: Date.now() - started, stderr, stdout });
        });
      });
    },
  };
}

/**
 * `sweep run` over every merchant of test mode, `runs` times back to back, as an operator would beside the worker. Each
 * run starts once a sweep the worker created is running (so the two drive one sweep at once), or at `latestAt` (ms
 * since `t0`) if none runs before.
 */
export async function runSecondDriver(
  o: { cli: ServiceCli; db: Db; runs: number; t0: number; latestAt: number },
  ev: (kind: string, detail: Record<string, unknown>) => void,
  violations: Violation[],
): Promise<void> {
  const { cli, runs } = o;
  const waitSeconds = 45;
  for (let i = 0; i < runs; i++) {
    const running = await runningSweepBy(o.db, o.t0 + o.latestAt);
    ev('sweep.cli.start', { run: i, running });
    const r = await cli.run(['sweep', 'run', '--mode', 'test', '--wait-seconds', String(waitSeconds), '--json'], (waitSeconds + 60) * 1000);
    const drove = driven(r.stdout);
    ev('sweep.cli.end', {
      run: i,
      code: r.code,
      signal: r.signal,
      ms: r.ms,
      ...drove,
      ...(r.code === 0 ? {} : { stderr: r.stderr.slice(-500) }),
    });
    if (r.signal !== null || (r.code !== 0 && r.code !== 1))
      violations.push({
        invariant: SECOND_DRIVER,
        message: `\`sweep run\` beside the worker ended with ${r.signal ? `signal ${r.signal}` : `exit code ${r.code}`} after ${r.ms} ms: ${r.stderr.slice(-300)}`,
      });
  }
}

/** The id of a running sweep once there is one (polled every 250 ms), or null at `deadline` (epoch ms). */
async function runningSweepBy(db: Db, deadline: number): Promise<string | null> {
  for (;;) {
    const row = await db
      .selectFrom('sweeps')
      .select('id')
      .where('status', '=', 'running')
      .executeTakeFirst()
      .catch(() => undefined); // PostgreSQL restarting: look again
    if (row) return row.id;
    if (Date.now() >= deadline) return null;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** What one `sweep run` reported (its JSON on stdout): the sweeps it created and those it resumed (the worker's). */
function driven(stdout: string): { created?: string[]; resumed?: string[] } {
  try {
    const j = JSON.parse(stdout.slice(Math.max(0, stdout.search(/^\{/m)))) as {
      created?: Array<{ id: string }>;
      resumed?: Array<{ id: string }>;
    };
    return { created: (j.created ?? []).map((s) => s.id), resumed: (j.resumed ?? []).map((s) => s.id) };
  } catch {
    return {};
  }
}
