import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { JsonRpcProvider } from 'ethers';

// A real Anvil node per test file, on a random free port, killed by stop(). Accounts come from the standard test
// mnemonic ("test test ... junk"), so account 0 is 0xf39F...2266.

const ANVIL = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules', '@foundry-rs', 'anvil-linux-amd64', 'bin', 'anvil');

export interface AnvilNode {
  url: string;
  port: number;
  provider: JsonRpcProvider;
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  mine(blocks?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

export async function startAnvil(options: { chainId?: number; blockTime?: number; extraArgs?: string[] } = {}): Promise<AnvilNode> {
  // A free port can be taken by another process (another test worker's Anvil) between freePort() and Anvil's bind:
  // only Anvil's own "Listening on" line proves that THIS process owns the port; otherwise try another one.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startAnvilOnce(options);
    } catch (err) {
      if (!(err instanceof PortTakenError) || attempt >= 5) throw err;
    }
  }
}

class PortTakenError extends Error {}

async function startAnvilOnce(options: { chainId?: number; blockTime?: number; extraArgs?: string[] }): Promise<AnvilNode> {
  const port = await freePort();
  const args = ['--port', String(port), '--host', '127.0.0.1', '--chain-id', String(options.chainId ?? 31337)];
  if (options.blockTime) args.push('--block-time', String(options.blockTime));
  args.push(...(options.extraArgs ?? []));
  const child: ChildProcess = spawn(ANVIL, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += String(d)));
  const url = `http://127.0.0.1:${port}`;
  const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const body = (await res.json()) as { result?: T; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result as T;
  };
  await new Promise<void>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`anvil did not start: ${stderr}`)), 20_000);
    const onData = (d: Buffer) => {
      stdout += String(d);
      if (stdout.includes(`Listening on 127.0.0.1:${port}`)) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        child.stdout?.resume(); // keep draining (Anvil logs RPC calls) so it never blocks on a full pipe
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', () => {
      clearTimeout(timer);
      reject(
        /address already in use|Address already in use|os error 98/i.test(stderr)
          ? new PortTakenError(stderr)
          : new Error(`anvil exited: ${stderr}`),
      );
    });
  });
  await rpc('eth_chainId');
  const provider = new JsonRpcProvider(url, undefined, { staticNetwork: true, pollingInterval: 50, cacheTimeout: -1 });
  return {
    url,
    port,
    provider,
    rpc,
    mine: async (blocks = 1) => {
      await rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
    },
    stop: async () => {
      provider.destroy();
      if (child.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      });
    },
  };
}
