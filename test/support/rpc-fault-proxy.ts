import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

// A JSON-RPC proxy in front of a node that injects the failures providers really produce: JSON-RPC errors, hangs
// (the client times out), HTTP 429 and 5xx, and "range too large" answers to eth_getLogs over more than
// `maxLogsRange` blocks (and a bare "limit exceeded" to one answering more than `maxLogsResults` logs: a fake of a
// provider's result cap). Faults are drawn from a seeded PRNG so a failing run can be replayed.
// It can also play a node that lies about the chain: `headLag` (a node N blocks behind: its head, its blocks and its
// logs stop N blocks below the real head), `headAhead` (a head number N blocks beyond the real one, without the
// blocks) and `forgeHashes` (every block and log hash rewritten, as a node on another fork would answer).

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
  /**
   * eth_getLogs whose answer holds more logs than this answers EIP-1474's bare `-32005 "limit exceeded"` instead (the
   * wording of geth-based public endpoints capping results; chains/evm/rpc-errors.ts reads it as a range to shrink).
   */
  maxLogsResults?: number;
  /** How long a "timeout" request hangs before the socket is destroyed. */
  hangMs?: number;
  headLag?: number;
  headAhead?: number;
  forgeHashes?: boolean;
  /** Solana: a `finalized` slot this many slots above the real one (a node lying about finality only). */
  finalAhead?: number;
  /** The next this-many eth_sendRawTransaction calls are refused by the node ("txpool is full"): nothing is forwarded. */
  refuseSendRaw?: number;
  /** Forward each request to `upstream` + its own path, with its own method (a REST-style HTTP JSON API such as
   * java-tron's wallet API, `/wallet/...`), instead of POSTing every request to `upstream` (a JSON-RPC endpoint). */
  forwardPath?: boolean;
}

/** The hash a forging proxy answers in place of `hash`. */
export const forgedHash = (hash: string): string => `0xdead${hash.slice(6)}`;

export interface FaultProxy {
  url: string;
  counts: Record<'forwarded' | 'error' | 'timeout' | 'http429' | 'http5xx' | 'range' | 'rewritten' | 'refused', number>;
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
  const counts: FaultProxy['counts'] = { forwarded: 0, error: 0, timeout: 0, http429: 0, http5xx: 0, range: 0, rewritten: 0, refused: 0 };
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
    if (msg.method === 'eth_sendRawTransaction' && (o.refuseSendRaw ?? 0) > 0) {
      o.refuseSendRaw = o.refuseSendRaw! - 1;
      counts.refused++;
      return reply(200, { jsonrpc: '2.0', id: msg.id ?? null, error: { code: -32000, message: 'txpool is full' } });
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
      const bodyless = req.method === 'GET' || req.method === 'HEAD';
      const upstream = o.forwardPath
        ? await fetch(`${o.upstream.replace(/\/$/, '')}${req.url ?? '/'}`, {
            method: req.method ?? 'POST',
            headers: { 'content-type': 'application/json' },
            ...(bodyless ? {} : { body }),
          })
        : await fetch(o.upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      let text = await upstream.text();
      if (msg.method === 'eth_getLogs' && o.maxLogsResults !== undefined && upstream.ok) {
        const logs = (JSON.parse(text) as { result?: unknown[] }).result;
        if (Array.isArray(logs) && logs.length > o.maxLogsResults) {
          counts.range++;
          return reply(200, { jsonrpc: '2.0', id: msg.id ?? null, error: { code: -32005, message: 'limit exceeded' } });
        }
      }
      if (upstream.ok && (o.headLag || o.headAhead || o.forgeHashes || o.finalAhead) && msg.method)
        text = await rewrite(msg.method, msg.params ?? [], text);
      res.writeHead(upstream.status, { 'content-type': 'application/json' });
      res.end(text);
    } catch {
      res.writeHead(502);
      res.end('bad gateway');
    }
  };

  const upstreamCall = async <T>(method: string, params: unknown[]): Promise<T> => {
    const r = await fetch(o.upstream, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return ((await r.json()) as { result: T }).result;
  };
  const forgeBlock = (b: { hash?: string; parentHash?: string } | null) =>
    b && { ...b, hash: b.hash && forgedHash(b.hash), parentHash: b.parentHash && forgedHash(b.parentHash) };

  // The answer of a lagging, over-claiming or forking node, built from the real one.
  const rewrite = async (method: string, params: unknown[], text: string): Promise<string> => {
    const parsed = JSON.parse(text) as { result?: unknown };
    if (!('result' in parsed)) return text;
    const solana = !method.startsWith('eth_');
    const real = solana ? 0n : BigInt(await upstreamCall<string>('eth_blockNumber', []));
    const visible = real - BigInt(o.headLag ?? 0);
    let result = parsed.result;
    if (method === 'getSlot' && typeof result === 'number') {
      // Solana: a node `headLag` slots behind (only its slot numbers; enough to be scored as lagging).
      const finalized = JSON.stringify(params).includes('finalized');
      result = result - (o.headLag ?? 0) + (o.headAhead ?? 0) + (finalized ? (o.finalAhead ?? 0) : 0);
    } else if (method === 'eth_blockNumber') {
      result = `0x${(visible + BigInt(o.headAhead ?? 0)).toString(16)}`;
    } else if (method === 'eth_getBlockByNumber') {
      const tag = params[0];
      if (tag === 'latest' && o.headLag) result = await upstreamCall('eth_getBlockByNumber', [`0x${visible.toString(16)}`, false]);
      else if (typeof tag === 'string' && tag.startsWith('0x') && BigInt(tag) > visible) result = null;
      if (o.forgeHashes) result = forgeBlock(result as { hash?: string } | null);
    } else if (method === 'eth_getLogs' && Array.isArray(result)) {
      const logs = result as Array<{ blockNumber: string; blockHash: string }>;
      result = logs
        .filter((l) => BigInt(l.blockNumber) <= visible)
        .map((l) => (o.forgeHashes ? { ...l, blockHash: forgedHash(l.blockHash) } : l));
    } else {
      return text;
    }
    counts.rewritten++;
    return JSON.stringify({ ...parsed, result });
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
