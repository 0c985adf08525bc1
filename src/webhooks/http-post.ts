import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { AttemptResult } from './retry-policy.js';
import type { ResolvedAddress } from './url-policy.js';

// One HTTP POST of a webhook. Connects only to an address the URL check accepted (the lookup is pinned), follows
// no redirects, and gives up after `timeoutMs` counted from the start until the response body has ended.

const EXCERPT_BYTES = 512;

export interface PostAgents {
  http: http.Agent;
  https: https.Agent;
  destroy(): void;
}

export function createPostAgents(maxSockets = 256): PostAgents {
  // Every socket a burst opened stays open for the next one (maxFreeSockets = maxSockets): a smaller idle pool closed
  // the surplus after each burst and paid a fresh TCP (and TLS) handshake for it on the next. The agent keys its
  // pool by host and port, so this is one keep-alive pool per endpoint.
  const opts = { keepAlive: true, maxSockets, maxFreeSockets: maxSockets, timeout: 60_000 };
  const a = { http: new http.Agent(opts), https: new https.Agent(opts) };
  return { ...a, destroy: () => (a.http.destroy(), a.https.destroy()) };
}

function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all;
    if (all) (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, [...addresses]);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  };
}

export async function postWebhook(input: {
  url: URL;
  addresses: readonly ResolvedAddress[];
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  agents?: PostAgents;
}): Promise<AttemptResult> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  const payload = Buffer.from(input.body, 'utf8');
  const isHttps = input.url.protocol === 'https:';
  const request = isHttps ? https.request : http.request;
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const finish = (r: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const req = request({
      protocol: input.url.protocol,
      hostname: input.url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: input.url.port || (isHttps ? 443 : 80),
      path: `${input.url.pathname}${input.url.search}`,
      method: 'POST',
      headers: { ...input.headers, 'Content-Length': String(payload.length) },
      lookup: pinnedLookup(input.addresses),
      agent: input.agents ? (isHttps ? input.agents.https : input.agents.http) : false,
    });
    const timer = setTimeout(() => {
      finish({ kind: 'timeout', latencyMs: latency() });
      req.destroy();
    }, input.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => finish({ kind: 'network', error: err.code ?? err.message, latencyMs: latency() }));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < EXCERPT_BYTES) chunks.push(c);
        size += c.length;
      });
      res.on('error', (err: NodeJS.ErrnoException) => finish({ kind: 'network', error: err.code ?? err.message, latencyMs: latency() }));
      res.on('end', () => {
        const excerpt = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
        finish({ kind: 'response', statusCode: res.statusCode ?? 0, latencyMs: latency(), excerpt });
      });
    });
    req.end(payload);
  });
}
