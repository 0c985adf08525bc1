import { type ChildProcess, fork } from 'node:child_process';

// Starts test/support/role-process.ts (src/main.ts's start() with the roles of `env`) as a child process and waits until
// it says it is up. Used by the harness's signer role in a process of its own (signer-role.ts) and by
// scripts/bench/processes.ts's API and worker processes. `lines` receives what the process prints.

export interface RoleProcess {
  child: ChildProcess;
  pid: number;
  /** The API's port when the roles include it. */
  port: number | null;
  /** Ends the process cleanly ('stop' over IPC); killed after `killAfterMs` if it has not exited. */
  stop(killAfterMs?: number): Promise<void>;
}

export async function spawnRole(env: Record<string, string>, name: string, lines?: (line: string) => void): Promise<RoleProcess> {
  const child = fork(new URL('./role-process.ts', import.meta.url).pathname, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const tail: string[] = [];
  const keep = (d: Buffer) => {
    for (const line of String(d).split('\n').filter(Boolean)) {
      lines?.(line);
      tail.push(line.slice(0, 300));
      if (tail.length > 20) tail.shift();
    }
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const ready = await new Promise<{ port: number | null }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { port: number | null }));
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before it was up: ${tail.join(' | ')}`)));
  });
  return {
    child,
    pid: child.pid!,
    port: ready.port,
    stop: (killAfterMs = 15_000) =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.send('stop');
      }),
  };
}
