// The typed chain registry (chains/chain-registry.ts) and the payment links each adapter builds for the hosted page.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvmChainAdapter } from '../../chains/evm/adapter.js';
import { ChainNotConfiguredError, ChainRegistry } from '../../chains/chain-registry.js';
import { paymentReference } from '../../chains/solana/solana-pay.js';
import { SolanaChainAdapter } from '../../chains/solana/adapter.js';
import { TronChainAdapter } from '../../chains/tron/adapter.js';
import { normalizeTronAddress } from '../../chains/tron/address.js';
import type { TokenContract } from '../../chains/types.js';

const ETH_USDT = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
const BSC_USDT = '0x55d398326f99059fF775485246999027B3197955';
const DEPOSIT = '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed';
const SOL_USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const SOL_OWNER = 'HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk';
const TRON_USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

const evm = (network: 'ethereum' | 'bsc', mode: 'test' | 'live', o: { chainId?: bigint; rpcUrl?: string; decimals?: number } = {}) =>
  new EvmChainAdapter({
    network,
    mode,
    rpcUrl: o.rpcUrl ?? 'http://127.0.0.1:1',
    ...(o.chainId !== undefined ? { chainId: o.chainId } : {}),
    tokens: [{ symbol: 'USDT', address: network === 'bsc' ? BSC_USDT : ETH_USDT, decimals: o.decimals ?? 6 }],
    confirmation: { kind: 'depth', confirmations: 12 },
  });

describe('ChainRegistry', () => {
  const ethTest = evm('ethereum', 'test');
  const bscLive = evm('bsc', 'live', { decimals: 18 });
  const registry = new ChainRegistry([{ adapter: ethTest, confirmations: 12, chainId: 11155111n }, bscLive]);

  it('finds an adapter by network and mode, and nothing for another mode or an unknown network', () => {
    expect(registry.get('ethereum', 'test')).toBe(ethTest);
    expect(registry.get('bsc', 'live')).toBe(bscLive);
    expect(registry.get('ethereum', 'live')).toBeUndefined();
    expect(registry.get('bsc', 'test')).toBeUndefined();
    expect(registry.get('dogecoin', 'test')).toBeUndefined();
    expect(registry.get('ethereum:test', 'test')).toBeUndefined();
    expect(registry.size).toBe(2);
    expect([...registry]).toEqual([ethTest, bscLive]);
    expect(registry.labels()).toEqual(['ethereum:test', 'bsc:live']);
  });

  it('require throws a typed error naming the chain', () => {
    expect(registry.require('bsc', 'live')).toBe(bscLive);
    const err = (() => {
      try {
        registry.require('tron', 'live');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ChainNotConfiguredError);
    expect(err).toMatchObject({ network: 'tron', mode: 'live', message: 'tron (live) is not configured' });
  });

  it('token and tokenDecimals answer from the adapter of that network and mode only', () => {
    expect(registry.token('bsc', 'live', 'USDT')).toEqual({ symbol: 'USDT', address: BSC_USDT.toLowerCase(), decimals: 18 });
    expect(registry.token('bsc', 'live', 'USDC')).toBeUndefined();
    expect(registry.token('ethereum', 'live', 'USDT')).toBeUndefined();
    const { tokenDecimals } = registry; // passed on its own, as the ledger receives it
    expect(tokenDecimals('ethereum', 'test', 'USDT')).toBe(6);
    expect(tokenDecimals('bsc', 'live', 'USDT')).toBe(18);
    expect(tokenDecimals('bsc', 'test', 'USDT')).toBeUndefined();
    expect(tokenDecimals('solana', 'live', 'USDC')).toBeUndefined();
  });

  it('addresses: canonical and display forms on a configured chain; null and the stored text elsewhere', () => {
    expect(registry.normalizeAddress('ethereum', 'test', '0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED')).toBe(DEPOSIT);
    expect(registry.normalizeAddress('ethereum', 'test', 'T-not-an-address')).toBeNull();
    expect(registry.normalizeAddress('tron', 'test', DEPOSIT)).toBeNull();
    expect(registry.displayAddress('ethereum', 'test', DEPOSIT)).toBe('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed');
    expect(registry.displayAddress('tron', 'test', DEPOSIT)).toBe(DEPOSIT);
  });

  it('carries the confirmation depth and configured chain id of each chain', () => {
    expect(registry.confirmations('ethereum', 'test')).toBe(12);
    expect(registry.confirmations('bsc', 'live')).toBeNull();
    expect(registry.chainId('ethereum', 'test')).toBe(11155111n);
    expect(registry.chainId('bsc', 'live')).toBeUndefined();
  });

  it('refuses two adapters of one network and mode', () => {
    expect(() => new ChainRegistry([evm('ethereum', 'test'), evm('ethereum', 'test')])).toThrow(/two adapters for ethereum \(test\)/);
    expect(new ChainRegistry([evm('ethereum', 'test'), evm('ethereum', 'live')]).size).toBe(2);
  });
});

describe('adapter payment links (the hosted page\'s "open in wallet" and QR)', () => {
  const request = (token: TokenContract, depositAddress: string) => ({
    token,
    depositAddress,
    amountBase: 12_340_000n,
    label: 'Café & Co',
  });

  it('EVM: EIP-681 with the configured chain id, checksummed addresses and base units', async () => {
    const a = evm('ethereum', 'test', { chainId: 31337n });
    const link = await a.paymentLink(request(a.tokens[0]!, DEPOSIT));
    expect(link.href).toBe(`ethereum:${ETH_USDT}@31337/transfer?address=0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed&uint256=12340000`);
    expect(link.qr).toBe(link.href);
  });

  it('EVM: the mainnet chain id in live mode when none is configured', async () => {
    expect((await evm('ethereum', 'live').paymentLink(request(evm('ethereum', 'live').tokens[0]!, DEPOSIT))).href).toMatch(
      /@1\/transfer\?/,
    );
    const bsc = evm('bsc', 'live');
    expect((await bsc.paymentLink(request(bsc.tokens[0]!, DEPOSIT))).href).toMatch(new RegExp(`^ethereum:${BSC_USDT}@56/transfer\\?`));
  });

  describe('EVM test chain without a configured id', () => {
    let server: Server;
    let url: string;
    let calls = 0;
    beforeAll(async () => {
      server = createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          calls++;
          const { id, method } = JSON.parse(body) as { id: number; method: string };
          // The first answer is an error: a failed read must not be cached.
          const reply =
            calls === 1
              ? { jsonrpc: '2.0', id, error: { code: -32000, message: 'busy' } }
              : { jsonrpc: '2.0', id, result: method === 'eth_chainId' ? '0x7a69' : null };
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify(reply));
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('asks the node once, and again only after a failed read', async () => {
      const a = evm('ethereum', 'test', { rpcUrl: url });
      await expect(a.paymentLink(request(a.tokens[0]!, DEPOSIT))).rejects.toThrow();
      const [x, y] = await Promise.all([a.paymentLink(request(a.tokens[0]!, DEPOSIT)), a.paymentLink(request(a.tokens[0]!, DEPOSIT))]);
      expect(x.href).toMatch(/@31337\/transfer\?/);
      expect(y).toEqual(x);
      await a.paymentLink(request(a.tokens[0]!, DEPOSIT));
      expect(calls).toBe(2);
    });
  });

  it('Solana: a Solana Pay transfer request to the deposit owner with its reference', async () => {
    const a = new SolanaChainAdapter({
      mode: 'live',
      rpcUrl: 'http://127.0.0.1:1',
      tokens: [{ symbol: 'USDC', address: SOL_USDC, decimals: 6 }],
    });
    const link = await a.paymentLink(request(a.tokens[0]!, SOL_OWNER));
    expect(link.href).toBe(
      `solana:${SOL_OWNER}?amount=12.34&spl-token=${SOL_USDC}&reference=${paymentReference(SOL_OWNER)}&label=Caf%C3%A9%20%26%20Co`,
    );
    expect(link.qr).toBe(link.href);
  });

  it('TRON: the QR is the bare base58 address, the link tron:<address> without an amount', async () => {
    const a = new TronChainAdapter({
      mode: 'live',
      jsonRpcUrl: 'http://127.0.0.1:1',
      tokens: [{ symbol: 'USDT', address: TRON_USDT, decimals: 6 }],
    });
    const deposit = normalizeTronAddress(TRON_USDT)!;
    const link = await a.paymentLink(request(a.tokens[0]!, deposit));
    expect(link).toEqual({ href: `tron:${TRON_USDT}`, qr: TRON_USDT });
  });
});
