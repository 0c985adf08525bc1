import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

// A JSON-RPC proxy in front of a node that injects the failures providers really produce: JSON-RPC errors, hangs
// (the client times out), HTTP 429 and 5xx, and "range too large" answers to eth_getLogs over more than
// `maxLogsRange` blocks. Faults are drawn from a seeded PRNG so a failing run can be replayed.

export interface FaultOptions {
  upstream: string;
  seed?: number;
  /** Probability, per request, of each fault. */
  errorRate?: number;
  timeoutRate?: number;
  http429Rate?: number;
  http5xxRate?: number;
  /** eth_getLogs spanning more blocks than this answers a provider-style range error. */
  maxLogsRange?: number;
  /** How long a "timeout" request hangs before the socket is destroyed. */
  hangMs?: number;
}

export interface FaultProxy {
  url: string;
  counts: Record<'forwarded' | 'error' | 'timeout' | 'http429' | 'http5xx' | 'range', number>;
  setFaults(f: Partial<FaultOptions>): void;
  close(): Promise<void>;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function startFaultProxy(options: FaultOptions): Promise<FaultProxy> {
  const o: FaultOptions = { ...options };
  const rand = mulberry32(o.seed ?? 1);
  const counts: FaultProxy['counts'] = { forwarded: 0, error: 0, timeout: 0, http429: 0, http5xx: 0, range: 0 };
  const hanging = new Set<ServerResponse>();

  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    let msg: { id?: unknown; method?: string; params?: Array<{ fromBlock?: string; toBlock?: string }> } = {};
    try {
      msg = JSON.parse(body) as typeof msg;
    } catch {
      /* forwarded as is */
    }
    const reply = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    if (msg.method === 'eth_getLogs' && o.maxLogsRange !== undefined) {
      const f = msg.params?.[0];
      if (f?.fromBlock?.startsWith('0x') && f.toBlock?.startsWith('0x')) {
        const from = BigInt(f.fromBlock);
        const to = BigInt(f.toBlock);
        if (to - from + 1n > BigInt(o.maxLogsRange)) {
          counts.range++;
          const suggested = from + BigInt(o.maxLogsRange) - 1n;
          const text =
            rand() < 0.5
              ? `query returned more than 10000 results. Try with this block range [0x${from.toString(16)}, 0x${suggested.toString(16)}].`
              : `block range is too wide (maximum ${o.maxLogsRange})`;
          return reply(200, { jsonrpc: '2.0', id: msg.id ?? null, error: { code: -32005, message: text } });
        }
      }
    }
    const r = rand();
    let edge = 0;
    if (r < (edge += o.errorRate ?? 0)) {
      counts.error++;
      return reply(200, { jsonrpc: '2.0', id: msg.id ?? null, error: { code: -32603, message: 'internal error (injected)' } });
    }
    if (r < (edge += o.timeoutRate ?? 0)) {
      counts.timeout++;
      hanging.add(res);
      setTimeout(() => {
        hanging.delete(res);
        res.destroy();
      }, o.hangMs ?? 3000).unref();
      return;
    }
    if (r < (edge += o.http429Rate ?? 0)) {
      counts.http429++;
      res.writeHead(429, { 'retry-after': '1' });
      return res.end('Too Many Requests');
    }
    if (r < (edge += o.http5xxRate ?? 0)) {
      counts.http5xx++;
      res.writeHead(503);
      return res.end('Service Unavailable');
    }
    counts.forwarded++;
    try {
      const upstream = await fetch(o.upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const text = await upstream.text();
      res.writeHead(upstream.status, { 'content-type': 'application/json' });
      res.end(text);
    } catch {
      res.writeHead(502);
      res.end('bad gateway');
    }
  };

  const server: Server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    setFaults: (f) => Object.assign(o, f),
    close: async () => {
      for (const h of hanging) h.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
