import { describe, expect, it } from 'vitest';
import { defaultExplorerTxUrl, explorerTxLink, explorerTxUrlSetting } from '../../chains/explorers.js';
import { ChainRegistry } from '../../chains/chain-registry.js';
import { loadChainSettings } from '../../src/watcher/config.js';

// Explorer links of the paid page (issue 17 item 10): defaults per network and mode, overridable per chain.
const RPC = { CHAIN_ETHEREUM_TEST_RPC_URL: 'http://127.0.0.1:8545' };

describe('explorer links', () => {
  it('defaults every mainnet, and a test chain only when its chain id names a public testnet', () => {
    expect(defaultExplorerTxUrl('ethereum', 'live')).toBe('https://etherscan.io/tx/{tx}');
    expect(defaultExplorerTxUrl('bsc', 'live')).toBe('https://bscscan.com/tx/{tx}');
    expect(defaultExplorerTxUrl('tron', 'live')).toBe('https://tronscan.org/#/transaction/{tx}');
    expect(defaultExplorerTxUrl('solana', 'live')).toBe('https://explorer.solana.com/tx/{tx}');
    expect(defaultExplorerTxUrl('ethereum', 'test', 11155111n)).toBe('https://sepolia.etherscan.io/tx/{tx}');
    expect(defaultExplorerTxUrl('bsc', 'test', 97n)).toBe('https://testnet.bscscan.com/tx/{tx}');
    expect(defaultExplorerTxUrl('tron', 'test', 3448148188n)).toBe('https://nile.tronscan.org/#/transaction/{tx}');
    expect(defaultExplorerTxUrl('ethereum', 'test', 31337n)).toBeNull(); // a local Anvil: no explorer knows it
    expect(defaultExplorerTxUrl('solana', 'test')).toBeNull();
  });

  it('reads CHAIN_<NET>_<MODE>_EXPLORER_TX_URL: a template, off, or a refusal naming the variable', () => {
    expect(loadChainSettings(RPC, 'ethereum', 'test')!.explorerTxUrl).toBeNull();
    expect(loadChainSettings({ ...RPC, CHAIN_ETHEREUM_TEST_CHAIN_ID: '11155111' }, 'ethereum', 'test')!.explorerTxUrl).toBe(
      'https://sepolia.etherscan.io/tx/{tx}',
    );
    const custom = { ...RPC, CHAIN_ETHEREUM_TEST_EXPLORER_TX_URL: 'https://scan.example/t/{tx}?x=1' };
    expect(loadChainSettings(custom, 'ethereum', 'test')!.explorerTxUrl).toBe('https://scan.example/t/{tx}?x=1');
    const live = { CHAIN_ETHEREUM_LIVE_RPC_URL: 'http://127.0.0.1:8545', CHAIN_ETHEREUM_LIVE_EXPLORER_TX_URL: 'off' };
    expect(loadChainSettings(live, 'ethereum', 'live')!.explorerTxUrl).toBeNull();
    for (const bad of ['https://scan.example/tx/', 'javascript:alert({tx})', 'scan.example/{tx}']) {
      expect(() => loadChainSettings({ ...RPC, CHAIN_ETHEREUM_TEST_EXPLORER_TX_URL: bad }, 'ethereum', 'test')).toThrow(
        'CHAIN_ETHEREUM_TEST_EXPLORER_TX_URL must be an http(s) URL containing {tx}, or off',
      );
    }
    expect(explorerTxUrlSetting('X', '  ', 'https://d/{tx}')).toBe('https://d/{tx}');
  });

  it('builds the link per network: TRON without 0x, the hash URL-encoded', () => {
    expect(explorerTxLink('https://etherscan.io/tx/{tx}', 'ethereum', '0xabc')).toBe('https://etherscan.io/tx/0xabc');
    expect(explorerTxLink('https://tronscan.org/#/transaction/{tx}', 'tron', '0xdef0')).toBe('https://tronscan.org/#/transaction/def0');
    expect(explorerTxLink('https://x/{tx}', 'solana', 'a/b')).toBe('https://x/a%2Fb');
  });

  it('the registry answers per network and mode, and null where nothing is configured', () => {
    const adapter = (network: 'ethereum' | 'tron', mode: 'test' | 'live') => ({ network, mode, tokens: [] }) as never;
    const r = new ChainRegistry([
      { adapter: adapter('ethereum', 'live'), explorerTxUrl: 'https://etherscan.io/tx/{tx}' },
      { adapter: adapter('ethereum', 'test'), explorerTxUrl: null },
      { adapter: adapter('tron', 'live'), explorerTxUrl: 'https://tronscan.org/#/transaction/{tx}' },
    ]);
    expect(r.explorerTxUrl('ethereum', 'live', '0x1')).toBe('https://etherscan.io/tx/0x1');
    expect(r.explorerTxUrl('ethereum', 'test', '0x1')).toBeNull();
    expect(r.explorerTxUrl('tron', 'live', '0x2')).toBe('https://tronscan.org/#/transaction/2');
    expect(r.explorerTxUrl('bsc', 'live', '0x3')).toBeNull();
  });
});
