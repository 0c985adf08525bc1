import { HDNodeWallet, Wallet } from 'ethers';
import { startAnvil, type AnvilNode } from '../../test/support/anvil.js';
import { deployToken, mintTo, type TokenShape } from '../../test/support/evm-tokens/deploy.js';
import { DEVNET_MNEMONIC, DEVNET_PAYER_PATH, type DevnetTokenState } from '../../src/cli/devnet.js';

// One local EVM chain of the demo: an Anvil node mining a block every second, with test USDT (Tether-style, returns
// nothing) and USDC (FiatToken-style) compiled by the solc-js bundled in node_modules, and the payer wallet funded.

export interface DevEvmChain {
  network: 'ethereum' | 'bsc';
  node: AnvilNode;
  chainId: number;
  tokens: Record<'USDT' | 'USDC', DevnetTokenState>;
}

const SHAPES: Array<{ symbol: 'USDT' | 'USDC'; shape: TokenShape }> = [
  { symbol: 'USDT', shape: 'tether' },
  { symbol: 'USDC', shape: 'fiat' },
];

export async function startDevEvmChain(network: 'ethereum' | 'bsc', chainId: number, decimals: number): Promise<DevEvmChain> {
  const node = await startAnvil({ chainId, blockTime: 1 });
  try {
    const deployer = new Wallet(HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, "m/44'/60'/0'/0/0").privateKey, node.provider);
    const payer = HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, DEVNET_PAYER_PATH).address;
    const tokens = {} as DevEvmChain['tokens'];
    for (const { symbol, shape } of SHAPES) {
      const contract = await deployToken(deployer, shape, symbol, decimals);
      await mintTo(contract, shape, payer, 1_000_000n * 10n ** BigInt(decimals));
      tokens[symbol] = { address: await contract.getAddress(), decimals };
    }
    return { network, node, chainId, tokens };
  } catch (err) {
    await node.stop();
    throw err;
  }
}

/** CHAIN_* variables of docs/chains.md for this chain (test mode; 2 confirmations: paid within seconds). */
export function chainEnv(c: DevEvmChain): Record<string, string> {
  const p = `CHAIN_${c.network.toUpperCase()}_TEST_`;
  return {
    [`${p}RPC_URL`]: c.node.url,
    [`${p}CHAIN_ID`]: String(c.chainId),
    [`${p}CONFIRMATIONS`]: '2',
    [`${p}POLL_INTERVAL_MS`]: '500',
    [`${p}USDT_CONTRACT`]: c.tokens.USDT.address,
    [`${p}USDT_DECIMALS`]: String(c.tokens.USDT.decimals),
    [`${p}USDC_CONTRACT`]: c.tokens.USDC.address,
    [`${p}USDC_DECIMALS`]: String(c.tokens.USDC.decimals),
  };
}
