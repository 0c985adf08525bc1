import { describe, expect, it } from 'vitest';
import { NETWORKS } from '../../chains/registry.js';
import { normalizeEvmAddress } from '../../chains/evm/address.js';
import { lookalikeTokens } from '../../chains/tokens/registry.js';
import { TOKEN_SYMBOLS } from '../../chains/types.js';
import { loadChainSettings } from '../../src/watcher/config.js';

// Issue 37: the network registry's look-alikes (USDbC, USDC.e, bridged USDT) and CHAIN_<NET>_<MODE>_LOOKALIKE_CONTRACTS.
// A look-alike sharing an address with a settlement token would turn a real payment into an unsupported one (or the
// reverse), so no network may list one address on both sides.

const A = '0x00000000000000000000000000000000000000aa';
const B = '0x00000000000000000000000000000000000000bb';
const C = '0x00000000000000000000000000000000000000cc';
const P = 'CHAIN_ETHEREUM_TEST_';
const base = { [`${P}RPC_URL`]: 'http://127.0.0.1:8545', [`${P}USDC_CONTRACT`]: A, [`${P}USDC_DECIMALS`]: '6' };
const lookalikes = (value: string | undefined, network: 'ethereum' | 'tron' = 'ethereum') => {
  const p = `CHAIN_${network.toUpperCase()}_TEST_`;
  const env = network === 'ethereum' ? { ...base } : { [`${p}RPC_URL`]: 'http://127.0.0.1:8545' };
  return loadChainSettings({ ...env, [`${p}LOOKALIKE_CONTRACTS`]: value }, network, 'test')!.lookalikes;
};

describe('the network registry look-alikes', () => {
  it('never share an address with a token of the same network, in either mode, nor with one another', () => {
    let count = 0;
    for (const n of NETWORKS) {
      for (const mode of ['live', 'test'] as const) {
        const tokens = n[mode].tokens.map((t) => t.address.toLowerCase());
        const alikes = n[mode].lookalikes.map((l) => l.address.toLowerCase());
        count += alikes.length;
        for (const a of alikes) expect(tokens, `${n.id} ${mode}: ${a}`).not.toContain(a);
        expect(new Set(alikes).size, `${n.id} ${mode}`).toBe(alikes.length);
        // Nor with a token of the other mode (a testnet token address reused on mainnet would be a registry slip).
        const other = n[mode === 'live' ? 'test' : 'live'].tokens.map((t) => t.address.toLowerCase());
        for (const a of alikes) expect(other, `${n.id} ${mode}: ${a}`).not.toContain(a);
      }
    }
    expect(count).toBeGreaterThanOrEqual(6); // Base 2, OP 2, Arbitrum 1, Polygon 1
  });

  it('are valid EVM addresses, named apart from the settlement tokens, with a note', () => {
    for (const n of NETWORKS) {
      for (const l of [...n.live.lookalikes, ...n.test.lookalikes]) {
        expect(n.family, `${n.id} ${l.symbol}`).toBe('evm');
        expect(normalizeEvmAddress(l.address), `${n.id} ${l.symbol}`).not.toBeNull();
        expect((TOKEN_SYMBOLS as readonly string[]).includes(l.symbol.toUpperCase()), `${n.id} ${l.symbol}`).toBe(false);
        expect(l.note.length).toBeGreaterThan(10);
      }
    }
    expect(lookalikeTokens('base', 'live').map((l) => l.symbol)).toContain('USDbC');
    expect(lookalikeTokens('arbitrum', 'live').map((l) => l.symbol)).toEqual(['USDC.e']);
    expect(lookalikeTokens('base', 'test')).toEqual([]);
  });
});

describe('CHAIN_<NET>_<MODE>_LOOKALIKE_CONTRACTS', () => {
  it('adds look-alikes in test mode (none by default), SYMBOL:0xADDRESS:DECIMALS comma-separated', () => {
    expect(lookalikes(undefined)).toEqual([]);
    expect(lookalikes(` USDC.e:${B}:6 , Bridged USDT:${C}:18`)).toEqual([
      { symbol: 'USDC.e', address: B, decimals: 6, note: `a look-alike configured in ${P}LOOKALIKE_CONTRACTS` },
      { symbol: 'Bridged USDT', address: C, decimals: 18, note: `a look-alike configured in ${P}LOOKALIKE_CONTRACTS` },
    ]);
  });

  it("merges with the registry's live look-alikes, a configured address replacing the registry's entry", () => {
    const p = 'CHAIN_BASE_LIVE_';
    const env = { [`${p}RPC_URL`]: 'http://127.0.0.1:8545' };
    const registry = loadChainSettings(env, 'base', 'live')!.lookalikes;
    expect(registry.map((l) => l.symbol)).toEqual(['USDbC', 'USDT (bridged)']);
    const usdbc = registry[0]!.address;
    const merged = loadChainSettings(
      { ...env, [`${p}LOOKALIKE_CONTRACTS`]: `USDbC-old:${usdbc}:6,XUSD:${B}:6` },
      'base',
      'live',
    )!.lookalikes;
    expect(merged.map((l) => l.symbol)).toEqual(['USDbC-old', 'USDT (bridged)', 'XUSD']);
  });

  it('is refused with the variable named: bad syntax, a settlement symbol, a token address, twice, non-EVM', () => {
    const name = `${P}LOOKALIKE_CONTRACTS`;
    expect(() => lookalikes(`USDC.e:${B}`)).toThrow(`${name}: "USDC.e:${B}" is not SYMBOL:0xADDRESS:DECIMALS`);
    expect(() => lookalikes(`USDC.e:0x1234:6`)).toThrow(name);
    expect(() => lookalikes(`USDC.e:${B}:6,`)).toThrow(`${name}: "" is not SYMBOL:0xADDRESS:DECIMALS`);
    expect(() => lookalikes(`usdc:${B}:6`)).toThrow(`${name}: a look-alike is named as operators should see it, never usdc`);
    expect(() => lookalikes(`USDT:${B}:6`)).toThrow(name);
    expect(() => lookalikes(`USDC.e:${A}:6`)).toThrow(`${name}: ${A} is a settlement token's contract on this network`);
    expect(() => lookalikes(`USDC.e:${B}:6,Other:${B.toUpperCase().replace('0X', '0x')}:6`)).toThrow(`${name}: ${B} is listed twice`);
    expect(() => lookalikes(`USDC.e:${B}:37`)).toThrow(`${name}: USDC.e decimals must be an integer in 0..36`);
    expect(() => lookalikes(`USDC.e:${B}:6`, 'tron')).toThrow(
      'CHAIN_TRON_TEST_LOOKALIKE_CONTRACTS: look-alike contracts are watched on EVM networks only',
    );
  });
});
