import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

// A private redis-server on a free port, for tests that restart or flush Redis (never the shared one on 6379).
// No persistence: a restart starts empty, as a Redis that lost its memory (and its loaded scripts) does.

export interface PrivateRedis {
  url: string;
  port: number;
  /** With `unixSocket`: the server's Unix-domain socket, and REDIS_URL's form for it (`unix:///path`). */
  socketPath?: string;
  socketUrl?: string;
  /** Stops the server and starts a new one on the same port (clients reconnect by themselves). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });
}

async function waitReady(url: string, child: ChildProcess): Promise<void> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    for (const end = Date.now() + 30_000; Date.now() < end; ) {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
      try {
        await probe.connect();
        if ((await probe.ping()) === 'PONG') return;
      } catch {
        probe.disconnect();
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error('private redis-server did not answer within 30 s');
  } finally {
    probe.disconnect();
  }
}

/** `unixSocket`: the server also listens on a Unix-domain socket in its private directory (`socketPath`). */
export async function startPrivateRedis(opts: { unixSocket?: boolean } = {}): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sp-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  const socketPath = opts.unixSocket ? join(dir, 'redis.sock') : undefined;
  const socketArgs = socketPath ? ['--unixsocket', socketPath, '--unixsocketperm', '700'] : [];
  const start = async (): Promise<ChildProcess> => {
    const child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', ...socketArgs, '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: 'ignore' },
    );
    await waitReady(url, child);
    return child;
  };
  const stopChild = async (c: ChildProcess) => {
    if (c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await exited;
  };
  const box = { child: await start() };
  return {
    url,
    port,
    ...(socketPath ? { socketPath, socketUrl: `unix://${socketPath}` } : {}),
    async restart() {
      await stopChild(box.child);
      box.child = await start();
    },
    async stop() {
      await stopChild(box.child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
