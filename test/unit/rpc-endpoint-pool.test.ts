import { describe, expect, it } from 'vitest';
import { redactUrl, scrubUrl } from '../../chains/rpc/redact.js';
import { EndpointPool } from '../../chains/rpc/endpoint-pool.js';
import { endpointFault } from '../../chains/evm/failover-rpc.js';
import { RpcError, classifyRpcError } from '../../chains/evm/rpc-errors.js';

describe('RPC endpoint labels', () => {
  it('drop user info, queries and key-like path segments; keep scheme, host, port and plain paths', () => {
    expect(redactUrl('https://eth-mainnet.g.alchemy.com/v2/AbCdEfGhIjKlMnOpQrStUv')).toBe('https://eth-mainnet.g.alchemy.com/v2/***');
    expect(redactUrl('https://user:s3cret@node.example:8545/rpc')).toBe('https://***@node.example:8545/rpc');
    expect(redactUrl('https://api.trongrid.io/jsonrpc?apikey=0123456789')).toBe('https://api.trongrid.io/jsonrpc?***');
    expect(redactUrl('https://mainnet.infura.io/v3/0123456789abcdef0123456789abcdef')).toBe('https://mainnet.infura.io/v3/***');
    expect(redactUrl('http://127.0.0.1:8545')).toBe('http://127.0.0.1:8545');
    expect(redactUrl('not a url')).toBe('<invalid url>');
  });

  it('scrub the URL and its secret pieces out of error text', () => {
    const url = 'https://user:pa55word@node.example/v2/AbCdEfGhIjKlMnOpQrStUv?key=zzzzzzzz';
    const text = `request to ${url} failed; key AbCdEfGhIjKlMnOpQrStUv, password pa55word`;
    const out = scrubUrl(text, url, redactUrl(url));
    for (const secret of ['AbCdEfGhIjKlMnOpQrStUv', 'pa55word', 'zzzzzzzz']) expect(out).not.toContain(secret);
  });
});

describe('endpoint pool', () => {
  const make = (now: { t: number }) =>
    new EndpointPool({
      network: 'ethereum',
      mode: 'live',
      urls: ['http://a.example', 'http://b.example'],
      maxLagBlocks: 10n,
      now: () => now.t,
    });

  it('orders healthy endpoints first, cools a faulty one with a doubling cool-down, then probation before rotation', () => {
    const now = { t: 1_000_000 };
    const pool = make(now);
    const [a, b] = pool.endpoints as [NonNullable<(typeof pool.endpoints)[0]>, NonNullable<(typeof pool.endpoints)[0]>];
    expect(pool.order()).toEqual([a, b]);
    pool.fault(a, 'timeout');
    expect(pool.state(a)).toBe('cooling');
    expect(pool.order()).toEqual([b, a]); // never refused: still last
    now.t += 1000;
    expect(pool.state(a)).toBe('probation');
    pool.headSeen(b, 100n);
    for (let i = 0; i < 2; i++) pool.headSeen(a, 100n);
    expect(pool.state(a)).toBe('probation');
    pool.headSeen(a, 100n);
    expect(pool.state(a)).toBe('healthy');
    expect(pool.order()).toEqual([a, b]);
    pool.fault(a, 'HTTP 503');
    expect(a.cooldownUntil - now.t).toBe(2000); // second fault within 5 minutes: doubled
  });

  it('a lagging endpoint leaves the rotation; one on probation claiming a head far ahead is never promoted', () => {
    const now = { t: 1_000_000 };
    const pool = make(now);
    const [a, b] = pool.endpoints as [NonNullable<(typeof pool.endpoints)[0]>, NonNullable<(typeof pool.endpoints)[0]>];
    pool.headSeen(a, 50n);
    pool.headSeen(b, 100n);
    expect(pool.state(a)).toBe('lagging');
    expect(pool.order()).toEqual([b, a]);
    pool.fault(a, 'block 160 not found');
    now.t += 1000;
    for (let i = 0; i < 10; i++) pool.headSeen(a, 1000n);
    expect(pool.state(a)).toBe('probation');
    expect(pool.bestHead()).toBe(100n); // the claim does not make b look behind
    expect(pool.state(b)).toBe('healthy');
  });

  it('classifies failures: the endpoint is at fault for transport, 429, 5xx and node errors, not for a request error', () => {
    expect(endpointFault(new RpcError('timeout', 'x'))).toBe('timeout');
    expect(endpointFault(new RpcError('rate_limited', 'HTTP 429', 429))).toMatch(/rate limited/);
    expect(endpointFault(new RpcError('unavailable', 'HTTP 503', 503))).toBe('HTTP 503');
    expect(endpointFault(classifyRpcError(-32603, 'internal error'))).toMatch(/-32603/);
    expect(endpointFault(classifyRpcError(-32000, 'header not found'))).toMatch(/header not found/);
    expect(endpointFault(classifyRpcError(3, 'execution reverted'))).toBeNull();
    expect(endpointFault(classifyRpcError(-32602, 'invalid argument 0'))).toBeNull();
    expect(endpointFault(classifyRpcError(-32005, 'query returned more than 10000 results'))).toBeNull();
  });
});
