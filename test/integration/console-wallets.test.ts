import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainRegistry } from '../../chains/chain-registry.js';
import type { ChainAdapter, KeyDeriver } from '../../chains/types.js';
import { startConsoleHarness, type ConsoleHarness } from '../support/console-harness.js';

// The console's wallets (operators): each merchant's refunds hot wallet per configured chain with its balances as
// decimal strings, the nonce held and pending attempts; with no chain configured or no keys an empty list (never a
// 5xx); a chain that does not answer in time reported as unavailable; merchant users refused.

let hang = false;
const hotAddress = (account: number) => `0x${(account + 1).toString(16).padStart(40, '0')}`;
const stub = {
  network: 'ethereum',
  mode: 'test',
  family: 'evm',
  tokens: [{ symbol: 'USDT', decimals: 6, contract: '0x2222222222222222222222222222222222222222' }],
  normalizeAddress: (t: string) => (/^0x[0-9a-fA-F]{40}$/.test(t) ? t.toLowerCase() : null),
  displayAddress: (a: string) => a,
  deriveHotWallet: async (_k: unknown, account: number) => ({ address: hotAddress(account), key: { curve: 'secp256k1', path: 'm' } }),
  getBalances: async () => {
    if (hang) await new Promise((r) => setTimeout(r, 9_000));
    return { native: 1_500_000_000_000_000_000n, tokens: { USDT: 7_250_000n } };
  },
} as unknown as ChainAdapter;
const treasury = {
  keys: {} as KeyDeriver,
  signer: null,
  prices: () => {
    throw new Error('no prices');
  },
  engine: { pollMs: 100, stuckAfterMs: 1000, feeBumpPercent: 10 },
};

let h: ConsoleHarness;
let bare: ConsoleHarness;
let merchantId: string;

beforeAll(async () => {
  h = await startConsoleHarness({ chains: new ChainRegistry([stub]) });
  bare = await startConsoleHarness();
  merchantId = (await h.merchant('Wallet shop')).merchantId;
});
afterAll(async () => {
  await h?.close();
  await bare?.close();
});

describe('GET /api/wallets', () => {
  it('answers an empty list without chains, and an explained empty list without keys', async () => {
    const none = await bare.call(bare.operator, 'GET', '/api/wallets');
    expect(none.status).toBe(200);
    expect(none.json).toEqual({ data: [], error: null });
    const noKeys = await h.call(h.operator, 'GET', '/api/wallets?mode=live');
    expect(noKeys.status).toBe(200);
    expect(noKeys.json.data).toEqual([]);
    expect(noKeys.json.error).toMatch(/HD_MNEMONIC/);
  });

  it("lists each merchant's refunds hot wallet with balances, nonce and pending attempts", async () => {
    h.ops.treasury = treasury;
    const r = await h.call(h.operator, 'GET', `/api/wallets?network=ethereum&mode=test&merchant_id=${merchantId}`);
    expect(r.status).toBe(200);
    expect(r.json.error).toBeNull();
    expect(r.json.data).toHaveLength(1);
    expect(r.json.data[0]).toMatchObject({
      network: 'ethereum',
      mode: 'test',
      role: 'refunds',
      merchant_id: merchantId,
      native: 'ETH',
      balance: '1.5',
      tokens: { USDT: '7.25' },
      nonce: null,
      pending_attempts: 0,
    });
  });

  it("shows a TRON wallet's energy and bandwidth available now, and none on an EVM chain", async () => {
    const tron = {
      ...stub,
      network: 'tron',
      family: 'tron',
      tokens: [{ symbol: 'USDT', decimals: 6, contract: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' }],
      normalizeAddress: (t: string) => t,
      deriveHotWallet: async () => ({ address: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE', key: { curve: 'secp256k1', path: 'm' } }),
      getBalances: async () => ({ native: 12_000_000n, tokens: { USDT: 0n } }),
      describeFeeResources: async () => ({
        energy: { limit: 100_000n, used: 35_000n, available: 65_000n },
        bandwidth: { freeLimit: 600n, freeUsed: 0n, stakedLimit: 0n, stakedUsed: 0n, available: 600n },
      }),
    } as unknown as ChainAdapter;
    const both = await startConsoleHarness({ chains: new ChainRegistry([stub, tron]) });
    try {
      both.ops.treasury = treasury;
      const shop = (await both.merchant('Two chains')).merchantId;
      const r = await both.call(both.operator, 'GET', `/api/wallets?mode=test&merchant_id=${shop}`);
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      const by = Object.fromEntries(r.json.data.map((w: { network: string }) => [w.network, w]));
      expect(by.tron).toMatchObject({ role: 'refunds', native: 'TRX', balance: '12', energy: '65000', bandwidth: '600' });
      expect(by.ethereum).toMatchObject({ energy: null, bandwidth: null });
    } finally {
      await both.close();
    }
  });

  it('reports the chains as unavailable when they do not answer in time', async () => {
    hang = true;
    const r = await h.call(h.operator, 'GET', '/api/wallets?network=ethereum');
    hang = false;
    expect(r.status).toBe(200);
    expect(r.json.data).toEqual([]);
    expect(r.json.error).toMatch(/did not answer/);
  }, 20_000);

  it('refuses merchant users (403) and unknown parameters (400)', async () => {
    expect((await h.call(h.merchantUser(merchantId), 'GET', '/api/wallets')).status).toBe(403);
    expect((await h.call(h.operator, 'GET', '/api/wallets?network=dogecoin')).status).toBe(400);
    expect((await h.call(h.operator, 'GET', '/api/wallets?foo=1')).status).toBe(400);
  });
});
