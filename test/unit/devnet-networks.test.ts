import { describe, expect, it } from 'vitest';
import { NETWORKS, type NetworkEntry, networkEntry } from '../../chains/registry.js';
import type { DevnetState } from '../../src/cli/devnet.js';
import { evmNetworks, feeModelText, liveDecimals, localBlockTimeSec, localChainId } from '../../scripts/devnet/evm.js';
import { networkOfFamily } from '../../scripts/devnet/fund.js';
import { PROFILE_NAMES, localProfile, publicProfile } from '../../scripts/testnet/profiles.js';

// The demo's chains and the testnet runner's profiles come from the network registry (issue 37, "Demo, testnets, CI"):
// a chain for every EVM network, a profile for every test mode with a public testnet, and `--local` picks the demo's
// chain of the profile's network. The slow scenarios (test/e2e/checkout-dev.test.ts, testnet-runner.test.ts) run them.

const entry = (id: string): NetworkEntry => networkEntry(id)!;

describe('npm run dev: one local chain per EVM network of the registry', () => {
  it('runs every EVM entry, in the registry order, each with its own chain id', () => {
    const evm = evmNetworks();
    expect(evm.map((e) => e.id)).toEqual(NETWORKS.filter((n) => n.family === 'evm').map((n) => n.id));
    expect(evm.map((e) => e.id)).toEqual(['ethereum', 'bsc', 'base', 'arbitrum', 'optimism', 'polygon']);
    const ids = evm.map(localChainId);
    expect(new Set(ids).size).toBe(ids.length);
    // Ethereum's stand-in keeps Anvil's 31337, BSC its testnet's 97 (as before); the others their testnet's id.
    expect(Object.fromEntries(evm.map((e) => [e.id, localChainId(e)]))).toEqual({
      ethereum: 31337,
      bsc: 97,
      base: 84532,
      arbitrum: 421614,
      optimism: 11155420,
      polygon: 80002,
    });
  });

  it('mines a block a second, Arbitrum at its own 0.25 s', () => {
    expect(Object.fromEntries(evmNetworks().map((e) => [e.id, localBlockTimeSec(e)]))).toEqual({
      ethereum: 1,
      bsc: 1,
      base: 1,
      arbitrum: 0.25,
      optimism: 1,
      polygon: 1,
    });
  });

  it('deploys both tokens at the decimals of the live ones (BSC 18, the others 6), also where only one is live', () => {
    expect(liveDecimals(entry('bsc'), 'USDT')).toBe(18);
    expect(liveDecimals(entry('bsc'), 'USDC')).toBe(18);
    expect(entry('base').live.tokens.map((t) => t.symbol)).toEqual(['USDC']);
    expect(liveDecimals(entry('base'), 'USDT')).toBe(6);
    for (const e of evmNetworks()) expect(liveDecimals(e, 'USDC')).toBe(e.live.tokens.find((t) => t.symbol === 'USDC')!.decimals);
  });

  it("names each chain's fee model in the printout", () => {
    expect(feeModelText(entry('base'))).toBe('OP-stack L1 fee');
    expect(feeModelText(entry('optimism'))).toBe('OP-stack L1 fee');
    expect(feeModelText(entry('arbitrum'))).toBe('Arbitrum L1 gas');
    expect(feeModelText(entry('polygon'))).toBe('no L1 fee, tip >= 25 gwei');
    expect(feeModelText(entry('ethereum'))).toBe('no L1 fee');
  });

  it('finds the one TRON and the one Solana network by family', () => {
    expect(networkOfFamily('tron')).toBe('tron');
    expect(networkOfFamily('solana')).toBe('solana');
  });
});

describe('npm run testnet: profiles from the registry', () => {
  it('has one profile per test mode with a public testnet, named by the registry', () => {
    expect([...PROFILE_NAMES].sort()).toEqual(
      NETWORKS.flatMap((n) => ((n.test as NetworkEntry['test']).testnet ? [(n.test as NetworkEntry['test']).testnet!.profile] : [])).sort(),
    );
    expect(PROFILE_NAMES).toEqual(
      expect.arrayContaining([
        'sepolia',
        'bsc-testnet',
        'solana-devnet',
        'nile',
        'base-sepolia',
        'arbitrum-sepolia',
        'op-sepolia',
        'polygon-amoy',
      ]),
    );
  });

  it("takes chain id, RPC, tokens, faucets, gas and explorer from the entry's test mode", () => {
    const p = publicProfile('base-sepolia', {});
    expect(p).toMatchObject({
      title: 'Base Sepolia',
      family: 'evm',
      serviceNetwork: 'base',
      envPrefix: 'BASE_SEPOLIA',
      rpcUrl: 'https://sepolia.base.org',
      rpcEnv: 'BASE_SEPOLIA_RPC_URL',
      chainId: 84532n,
      native: { symbol: 'ETH', decimals: 18, faucet: entry('base').test.testnet!.nativeFaucet },
      fundGas: 2_000_000_000_000_000n,
      local: false,
    });
    // Circle's test USDC only: Tether issues no testnet USDT (docs/testnets.md).
    expect(p.tokens).toEqual([
      { symbol: 'USDC', address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', decimals: 6, faucet: 'https://faucet.circle.com' },
    ]);
    expect(p.explorerTx('0xab')).toBe('https://sepolia.basescan.org/tx/0xab');
    expect(publicProfile('polygon-amoy', {}).native.symbol).toBe('POL');
    expect(publicProfile('bsc-testnet', {}).native.symbol).toBe('tBNB');
    for (const name of ['arbitrum-sepolia', 'op-sepolia', 'polygon-amoy'])
      expect(publicProfile(name, {}).tokens.map((t) => t.symbol)).toEqual(['USDC']);
  });

  it("reads overrides under the profile's prefix; TRON keeps TRON_NILE_ and its full host", () => {
    expect(PROFILE_NAMES.map((n) => publicProfile(n, {}).envPrefix).sort()).toEqual(
      ['ARBITRUM_SEPOLIA', 'BASE_SEPOLIA', 'BSC_TESTNET', 'OP_SEPOLIA', 'POLYGON_AMOY', 'SEPOLIA', 'SOLANA_DEVNET', 'TRON_NILE'].sort(),
    );
    const p = publicProfile('op-sepolia', {
      OP_SEPOLIA_RPC_URL: 'http://127.0.0.1:1',
      OP_SEPOLIA_CHAIN_ID: '5',
      OP_SEPOLIA_USDT: '0x00000000000000000000000000000000000000a1',
      OP_SEPOLIA_FUND_GAS: '0.125',
    });
    expect(p).toMatchObject({ rpcUrl: 'http://127.0.0.1:1', chainId: 5n, fundGas: 125_000_000_000_000_000n });
    expect(p.tokens.map((t) => [t.symbol, t.address])).toEqual([
      ['USDC', '0x5fd84259d66Cd46123540766Be93DFE6D43130D7'],
      ['USDT', '0x00000000000000000000000000000000000000a1'],
    ]);
    expect(publicProfile('nile', { TRON_NILE_FULL_HOST: 'http://127.0.0.1:2/' })).toMatchObject({
      rpcEnv: 'TRON_NILE_FULL_HOST',
      rpcUrl: 'http://127.0.0.1:2',
      chainId: 3448148188n,
    });
    expect(publicProfile('solana-devnet', {})).toMatchObject({ chainId: null, genesisHash: entry('solana').test.testnet!.genesisHash });
    expect(() => publicProfile('mumbai', {})).toThrow(/no testnet profile mumbai/);
  });

  it("--local runs on the demo's chain of the profile's network, with the demo's tokens", () => {
    const chain = (port: number, chainId: number) => ({
      rpcUrl: `http://127.0.0.1:${port}`,
      chainId,
      tokens: { USDT: { address: `0x${'1'.repeat(40)}`, decimals: 6 }, USDC: { address: `0x${'2'.repeat(40)}`, decimals: 6 } },
    });
    const state: DevnetState = {
      baseUrl: 'http://localhost:3000',
      checkoutBaseUrl: 'http://localhost:3000/pay',
      pid: 1,
      evm: Object.fromEntries(evmNetworks().map((e, i) => [e.id, chain(9000 + i, localChainId(e))])),
    };
    for (const e of evmNetworks()) {
      const p = localProfile(e.test.testnet!.profile, state, {});
      expect(p).toMatchObject({ serviceNetwork: e.id, rpcUrl: state.evm[e.id]!.rpcUrl, chainId: BigInt(localChainId(e)), local: true });
      // The testnet's own token first, then the other one the demo deployed.
      expect(p.tokens[0]!.symbol).toBe(e.test.tokens[0]!.symbol);
      expect(p.tokens.map((t) => t.symbol).sort()).toEqual(['USDC', 'USDT']);
      expect(p.explorerTx('0xab')).toBeNull();
    }
    const { base: _gone, ...withoutBase } = state.evm;
    expect(() => localProfile('base-sepolia', { ...state, evm: withoutBase }, {})).toThrow(/the local demo runs no base chain/);
  });
});
