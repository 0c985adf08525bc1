import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';

// The service's roles as separate OS processes (src/main.ts with ROLES=api|worker|watcher), supervised as systemd or
// Kubernetes would: a process that exits for any reason (a scheduled SIGKILL, a failpoint's own SIGKILL, a crash on a
// dead database) is started again after `restartDelayMs`. Every start, kill and exit is reported to `onEvent` for the
// seed's event log. `o.args` (scripts/sim/service-build.ts) says what node runs: tsx on src/main.ts by default, or the
// compiled dist/src/main.js of a build made for this invocation.
// A role armed with failpoints (SP_FAILPOINTS) stays armed until one fires: every start of it gets them, whatever ended
// the previous process (a `kill` fault, a crash on a dead database, a start-up that failed during an RPC fault window),
// until a process of it exits by a SIGKILL the supervisor did not send (a failpoint's own), after which it runs without.
// So an armed fault always happens at the next point the role reaches, never silently lost to an unrelated restart.
// The signer role (docs/signer.md) is one of them, first in the list (so started first); the signer faults send it
// SIGSTOP/SIGCONT through `signal` (scripts/sim/faults/signer.ts).

export type RoleName = 'api' | 'worker' | 'watcher-a' | 'watcher-b' | 'signer';

export interface RoleSpec {
  name: RoleName;
  env: Record<string, string>;
}

export interface Supervisor {
  /** SIGKILLs the role now (it is restarted, armed as it was; `failpoints`, when given, replaces what it is armed with). */
  kill(name: RoleName, failpoints?: string[]): void;
  /** Arms SP_FAILPOINTS: the role restarts now with them set and keeps them until one fires (it kills itself there). */
  arm(name: RoleName, failpoints: string[]): void;
  running(name: RoleName): boolean;
  /** Sends `signal` to the role's running process (SIGSTOP/SIGCONT: a stalled signer); its pid, or undefined if none runs. */
  signal(name: RoleName, signal: NodeJS.Signals): number | undefined;
  counts: { starts: number; kills: number; exits: number };
  stopAll(): Promise<void>;
}

const CRASH = /Unhandled 'error' event|uncaughtException|UnhandledPromiseRejection|triggerUncaughtException/;

/** Every supervisor running now: a signal to the simulator stops their processes before it exits. */
export const activeSupervisors = new Set<Supervisor>();

export function startSupervisor(
  roles: RoleSpec[],
  o: {
    logFile: string;
    restartDelayMs: number;
    onEvent: (kind: string, detail: Record<string, unknown>) => void;
    /** Where the roles run from (a mutated copy of the project, a compiled build); default the current directory. */
    cwd?: string;
    /** Node's arguments for a role (default: tsx on src/main.ts). */
    args?: string[];
  },
): Supervisor {
  const log: WriteStream = createWriteStream(o.logFile, { flags: 'a' });
  /** `armed`: the failpoints every start of the role gets until one fires. */
  const procs = new Map<RoleName, { child?: ChildProcess; spec: RoleSpec; gen: number; armed: string[] }>();
  const state = { stopping: false };
  const counts = { starts: 0, kills: 0, exits: 0 };

  // Each start of a role is one generation; an exit or a timer of an older generation does nothing.
  const launch = (spec: RoleSpec, gen: number) => {
    const p = procs.get(spec.name);
    if (state.stopping || p?.gen !== gen) return;
    const failpoints = p.armed;
    const child = spawn(process.execPath, o.args ?? ['--import', 'tsx', 'src/main.ts'], {
      ...(o.cwd ? { cwd: o.cwd } : {}),
      env: { PATH: process.env.PATH ?? '', ...spec.env, SP_FAILPOINTS: failpoints.join(',') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    counts.starts++;
    const tag = `[${spec.name} ${child.pid}] `;
    const tail = { text: '' };
    const pipe = (d: Buffer) => {
      tail.text = (tail.text + String(d)).slice(-4000);
      for (const line of String(d).split('\n')) if (line) log.write(`${tag}${line}\n`);
    };
    child.stdout?.on('data', pipe);
    child.stderr?.on('data', pipe);
    procs.set(spec.name, { child, spec, gen, armed: failpoints });
    o.onEvent('process.start', { role: spec.name, pid: child.pid, failpoints });
    child.once('exit', (code, signal) => {
      counts.exits++;
      o.onEvent('process.exit', { role: spec.name, pid: child.pid, code, signal });
      // Exiting on a failed start (a dead database at start-up) is a supervisor's business; an uncaught error of a
      // running process is a crash the service should have handled.
      const crash = CRASH.exec(tail.text);
      if (crash)
        o.onEvent('process.crash', {
          role: spec.name,
          pid: child.pid,
          code,
          excerpt: tail.text.slice(Math.max(0, crash.index - 200), crash.index + 600),
        });
      if (state.stopping || procs.get(spec.name)?.gen !== gen) return;
      // This generation's SIGKILL was not the supervisor's (its kills come with a new generation): a failpoint fired.
      // A failpoint fires once per arming: from then on the role runs without; any other exit keeps it armed.
      const fired = failpoints.length > 0 && signal === 'SIGKILL';
      if (fired) o.onEvent('failpoint.fired', { role: spec.name, pid: child.pid, failpoints });
      procs.set(spec.name, { spec, gen: gen + 1, armed: fired ? [] : failpoints });
      setTimeout(() => launch(spec, gen + 1), o.restartDelayMs).unref();
    });
  };
  for (const spec of roles) {
    procs.set(spec.name, { spec, gen: 0, armed: [] });
    launch(spec, 0);
  }

  const relaunch = (name: RoleName, failpoints: string[] | undefined, reason: string) => {
    const p = procs.get(name);
    if (!p || state.stopping) return;
    counts.kills++;
    const armed = failpoints ?? p.armed;
    o.onEvent(reason, { role: name, pid: p.child?.pid, failpoints: armed });
    const gen = p.gen + 1;
    procs.set(name, { spec: p.spec, gen, armed });
    const old = p.child;
    if (old && old.exitCode === null && old.signalCode === null) old.kill('SIGKILL');
    setTimeout(() => launch(p.spec, gen), reason === 'fault.failpoint' ? 0 : o.restartDelayMs).unref();
  };

  const sup: Supervisor = {
    kill: (name, failpoints) => relaunch(name, failpoints, 'fault.kill'),
    arm: (name, failpoints) => relaunch(name, failpoints, 'fault.failpoint'),
    running: (name) => {
      const c = procs.get(name)?.child;
      return !!c && c.exitCode === null && c.signalCode === null;
    },
    signal: (name, signal) => {
      const c = procs.get(name)?.child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return undefined;
      c.kill(signal);
      return c.pid;
    },
    counts,
    async stopAll() {
      state.stopping = true;
      const waits: Promise<void>[] = [];
      for (const { child } of procs.values()) {
        if (!child || child.exitCode !== null || child.signalCode !== null || child.pid === undefined) continue;
        waits.push(new Promise<void>((resolve) => child.once('exit', () => resolve())));
        child.kill('SIGKILL');
      }
      await Promise.all(waits);
      activeSupervisors.delete(sup);
      await new Promise<void>((resolve) => log.end(() => resolve()));
    },
  };
  activeSupervisors.add(sup);
  return sup;
}
