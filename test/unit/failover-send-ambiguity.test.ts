import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { FailoverJsonRpc } from '../../chains/evm/failover-rpc.js';
import { RpcError } from '../../chains/evm/rpc-errors.js';
import { listenOnLoopback } from '../support/listen.js';

// A signed transaction offered over two endpoints (docs/outbound.md, "A refusal is not a death"): when the first one
// fails without a clear answer it may have taken the bytes and passed them on, so the second one's refusal must not
// reach the outbound engine as a refusal (which may give the nonce back and let the job fail or re-sign while the
// bytes can still land). Real HTTP servers on loopback answer as JSON-RPC nodes do.

type Answer = 'hang' | 'refuse' | 'internal' | 'rate-limit' | 'accept';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A JSON-RPC node answering eth_sendRawTransaction as `answer` says (eth_blockNumber always). Counts the sends. */
async function node(answer: Answer): Promise<{ url: string; sends: () => number }> {
  let sends = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const { id, method } = JSON.parse(body) as { id: number; method: string };
      const reply = (payload: object, status = 200) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id, ...payload }));
      };
      if (method !== 'eth_sendRawTransaction') return reply({ result: '0x10' });
      sends++;
      if (answer === 'hang') return; // never answers: the client's timeout
      if (answer === 'refuse') return reply({ error: { code: -32000, message: 'insufficient funds for gas * price + value' } });
      if (answer === 'internal') return reply({ error: { code: -32603, message: 'internal error' } });
      if (answer === 'rate-limit') return reply({ error: { code: 429, message: 'Too Many Requests' } }, 429);
      return reply({ result: '0xabc' });
    });
  });
  servers.push(server);
  const port = await listenOnLoopback(server);
  return { url: `http://127.0.0.1:${port}`, sends: () => sends };
}

const send = (urls: string[]) =>
  new FailoverJsonRpc({ network: 'ethereum', mode: 'test', urls, timeoutMs: 300 }).call<string>('eth_sendRawTransaction', ['0x02']);

describe('eth_sendRawTransaction over failover endpoints', () => {
  it('a refusal after an endpoint timed out on the same bytes is reported as the timeout, not as a refusal', async () => {
    const a = await node('hang');
    const b = await node('refuse');
    const err = await send([a.url, b.url]).catch((e: unknown) => e);
    expect(a.sends()).toBe(1);
    expect(b.sends()).toBe(1);
    expect(err).toBeInstanceOf(RpcError);
    expect((err as RpcError).kind).toBe('timeout');
  });

  it('a refusal is the answer when no endpoint before it could have taken the bytes (none, or only rate limited)', async () => {
    const refusing = await node('refuse');
    const alone = await send([refusing.url]).catch((e: unknown) => e);
    expect((alone as RpcError).kind).toBe('rpc_error');
    expect((alone as RpcError).message).toMatch(/insufficient funds/);

    const limited = await node('rate-limit');
    const after429 = await send([limited.url, refusing.url]).catch((e: unknown) => e);
    expect(limited.sends()).toBe(1);
    expect((after429 as RpcError).kind).toBe('rpc_error');
    expect((after429 as RpcError).message).toMatch(/insufficient funds/);
  });

  it('an internal error of the only endpoint is no refusal either: the error says the bytes may have been taken', async () => {
    const a = await node('internal');
    const err = await send([a.url]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect((err as RpcError).kind).toBe('unavailable');
    expect((err as RpcError).message).toMatch(/may have been taken.*internal error/);
    const b = await node('refuse');
    const then = await send([a.url, b.url]).catch((e: unknown) => e);
    expect((then as RpcError).kind).toBe('unavailable');
  });

  it('an endpoint that takes the bytes after one timed out answers the call', async () => {
    const a = await node('hang');
    const b = await node('accept');
    expect(await send([a.url, b.url])).toBe('0xabc');
  });
});
