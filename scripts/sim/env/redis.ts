import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../../../test/support/anvil.js';

// The simulator's OWN redis-server (never the machine's shared one) on a private port, with an append-only file
// fsynced on every write, as a deployment that keeps its BullMQ jobs across a crash would run it. `crash()` is a
// SIGKILL; `start()` restarts it on the same port and directory, so it reloads the AOF. Overlapping restart faults
// merge: a crash while it is already down does nothing, a start while it is already up does nothing (a killed
// process has a signalCode and no exitCode: waiting for its 'exit' again hung the seed for good, and a second server
// on the same port failed to start while the first went on unowned).

export interface SimRedis {
  url: string;
  crash(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSimRedis(): Promise<SimRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'sp-sim-redis-'));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const holder: { child?: ChildProcess } = {};
  const alive = (c: ChildProcess | undefined): c is ChildProcess => !!c && c.exitCode === null && c.signalCode === null;
  const start = async () => {
    if (alive(holder.child)) return;
    const child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'],
      { stdio: 'ignore' },
    );
    holder.child = child;
    for (let i = 0; ; i++) {
      const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      r.on('error', () => {});
      const ok = await r.connect().then(
        () => r.ping().then(() => true),
        () => false,
      );
      r.disconnect();
      if (ok) return;
      if (i > 100 || !alive(child)) throw new Error(`redis-server did not start on ${port}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  };
  const crash = async () => {
    const child = holder.child;
    if (!alive(child)) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  };
  await start();
  return {
    url,
    crash,
    start,
    async stop() {
      await crash();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
