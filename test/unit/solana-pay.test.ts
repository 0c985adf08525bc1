// Solana Pay transfer-request URLs built for the hosted page.
import { describe, expect, it } from 'vitest';
import { formatTokenAmount, paymentReference, solanaPayTransferUrl } from '../../chains/solana/solana-pay.js';
import { SolanaChainAdapter } from '../../chains/solana/adapter.js';

const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const OWNER = 'HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk';

describe('Solana Pay', () => {
  it('formats base units as a plain decimal without trailing zeros', () => {
    expect(formatTokenAmount(12_500_000n, 6)).toBe('12.5');
    expect(formatTokenAmount(1n, 6)).toBe('0.000001');
    expect(formatTokenAmount(100_000_000n, 6)).toBe('100');
    expect(formatTokenAmount(0n, 6)).toBe('0');
    expect(formatTokenAmount(123_456_789_012_345_678_901n, 6)).toBe('123456789012345.678901');
    expect(() => formatTokenAmount(-1n, 6)).toThrow(RangeError);
  });

  it('builds solana:<recipient>?amount&spl-token&reference&label&message with percent-encoding', () => {
    const ref = paymentReference(OWNER);
    const url = solanaPayTransferUrl({
      recipient: OWNER,
      amount: 10_010_000n,
      decimals: 6,
      splToken: USDC,
      references: [ref],
      label: 'Café & Co',
      message: 'Order #42 – thanks',
    });
    expect(url).toBe(
      `solana:${OWNER}?amount=10.01&spl-token=${USDC}&reference=${ref}&label=Caf%C3%A9%20%26%20Co&message=Order%20%2342%20%E2%80%93%20thanks`,
    );
    const parsed = new URL(url);
    expect(parsed.protocol).toBe('solana:');
    expect(parsed.searchParams.get('label')).toBe('Café & Co');
    expect(() => solanaPayTransferUrl({ recipient: OWNER, amount: 0n, decimals: 6, splToken: USDC })).toThrow(RangeError);
    expect(() => solanaPayTransferUrl({ recipient: 'not-a-key', amount: 1n, decimals: 6, splToken: USDC })).toThrow();
  });

  it('derives a reference that is stable per deposit owner and differs between owners', () => {
    const other = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
    expect(paymentReference(OWNER)).toBe(paymentReference(OWNER));
    expect(paymentReference(OWNER)).not.toBe(paymentReference(other));
    expect(paymentReference(OWNER)).not.toBe(OWNER);
  });

  it('is offered by the adapter with the registry mint and decimals', () => {
    const adapter = new SolanaChainAdapter({
      mode: 'live',
      rpcUrl: 'http://127.0.0.1:1',
      tokens: [{ symbol: 'USDC', address: USDC, decimals: 6 }],
    });
    const url = adapter.transferRequestUrl({ depositOwner: OWNER, token: 'USDC', amount: 1_000_000n, label: 'Shop' });
    expect(url).toBe(`solana:${OWNER}?amount=1&spl-token=${USDC}&reference=${paymentReference(OWNER)}&label=Shop`);
    expect(() => adapter.transferRequestUrl({ depositOwner: OWNER, token: 'USDT', amount: 1n })).toThrow(/no USDT/);
  });
});
