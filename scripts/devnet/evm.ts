import { HDNodeWallet, Wallet } from 'ethers';
import { NETWORKS, networkEntry, type NetworkEntry } from '../../chains/registry.js';
import type { NetworkId } from '../../chains/vocabulary.js';
import { DEVNET_MNEMONIC, DEVNET_PAYER_PATH, type DevnetTokenState } from '../../src/cli/devnet.js';
import { deployToken, mintTo, type TokenShape } from '../../test/support/evm-tokens/deploy.js';
import { startNetworkAnvil, type NetworkAnvil } from '../../test/support/network-anvil.js';

// The demo's local EVM chains: one Anvil node per EVM network of the registry (chains/registry.ts), each started by
// startNetworkAnvil so that it charges fees the way its network does (OP-stack L1 data fee with a GasPriceOracle
// stand-in, Arbitrum's fast blocks with a NodeInterface stand-in, plain gas elsewhere; docs/chains.md, "Fees"). Each gets
// both test tokens, USDT Tether-style (returns nothing) and USDC FiatToken-style, compiled by the solc-js bundled in
// node_modules, at the decimals of the network's live tokens (BSC 18, the others 6). Both everywhere, also where the
// live network has only one (Base: USDC only, Tether issues no USDT there): every `devnet pay --token` works on every
// chain; production's tokens are the registry's. The devnet payer holds 1,000,000 of each. Choices documented in
// docs/checkout.md ("The local demo").

export interface DevEvmChain {
  network: NetworkId;
  entry: NetworkEntry;
  node: NetworkAnvil;
  chainId: number;
  /** Seconds between blocks. */
  blockTimeSec: number;
  tokens: Record<'USDT' | 'USDC', DevnetTokenState>;
}

const SHAPE: Record<'USDT' | 'USDC', TokenShape> = { USDT: 'tether', USDC: 'fiat' };

/** Anvil's default chain id, what wallets call "Localhost": the local stand-in of Ethereum mainnet keeps it. */
const ANVIL_DEFAULT_CHAIN_ID = 31337;
/** The demo's block time; a network whose blocks come faster than twice a second keeps its own, down to this floor. */
const DEMO_BLOCK_MS = 1000;
const FASTEST_BLOCK_MS = 250;

/** The registry's EVM networks, in its order: the demo runs a chain for each. */
export function evmNetworks(): NetworkEntry[] {
  return (NETWORKS as readonly NetworkEntry[]).filter((n) => n.family === 'evm');
}

/**
 * The local chain id: Ethereum mainnet's stand-in (live chain id 1) keeps Anvil's 31337; every other network takes its
 * public testnet's id (BSC 97, Base Sepolia 84532, Arbitrum Sepolia 421614, OP Sepolia 11155420, Polygon Amoy 80002),
 * so a wallet pointed at the demo shows a chain it knows and no two local chains share an id.
 */
export function localChainId(entry: NetworkEntry): number {
  if (entry.live.chainId === '1' || !entry.test.chainId) return ANVIL_DEFAULT_CHAIN_ID;
  return Number(entry.test.chainId);
}

/** 1 s blocks; a network faster than 2 blocks a second (Arbitrum, 0.25 s) keeps its rate, never faster than 0.25 s. */
export function localBlockTimeSec(entry: NetworkEntry): number {
  const ms = entry.blockTimeMs < DEMO_BLOCK_MS / 2 ? Math.max(FASTEST_BLOCK_MS, entry.blockTimeMs) : DEMO_BLOCK_MS;
  return ms / 1000;
}

/** How the chain charges fees, as the demo's printout says it. */
export function feeModelText(entry: NetworkEntry): string {
  const parts: string[] = [];
  const l1 = entry.fees?.l1 ?? 'none';
  if (l1 === 'op-stack') parts.push('OP-stack L1 fee');
  else if (l1 === 'nitro') parts.push('Arbitrum L1 gas');
  else parts.push('no L1 fee');
  if (entry.fees?.minPriorityFeeWei) parts.push(`tip >= ${BigInt(entry.fees.minPriorityFeeWei) / 10n ** 9n} gwei`);
  return parts.join(', ');
}

/** The decimals of the network's live `symbol`, else of its other live token (a network's stablecoins share them). */
export function liveDecimals(entry: NetworkEntry, symbol: 'USDT' | 'USDC'): number {
  const t = entry.live.tokens.find((x) => x.symbol === symbol) ?? entry.live.tokens[0];
  if (!t) throw new Error(`${entry.id} lists no live token`);
  return t.decimals;
}

/**
 * The local chain of `entry` (chain id, block time and decimals as above). The simulator's form names the network, the
 * chain id and one decimals for both tokens (scripts/sim/env/evm.ts).
 */
export async function startDevEvmChain(
  entryOrId: NetworkEntry | NetworkId,
  chainIdArg?: number,
  decimalsArg?: number,
): Promise<DevEvmChain> {
  const entry = typeof entryOrId === 'string' ? networkEntry(entryOrId) : entryOrId;
  if (!entry || entry.family !== 'evm') throw new Error(`${String(entryOrId)} is not an EVM network of the registry`);
  const chainId = chainIdArg ?? localChainId(entry);
  const blockTimeSec = localBlockTimeSec(entry);
  const node = await startNetworkAnvil(entry, { chainId, blockTimeSec });
  try {
    const deployer = new Wallet(HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, "m/44'/60'/0'/0/0").privateKey, node.provider);
    const payer = HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, DEVNET_PAYER_PATH).address;
    const tokens = {} as DevEvmChain['tokens'];
    for (const symbol of ['USDT', 'USDC'] as const) {
      const decimals = decimalsArg ?? liveDecimals(entry, symbol);
      const contract = await deployToken(deployer, SHAPE[symbol], symbol, decimals);
      await mintTo(contract, SHAPE[symbol], payer, 1_000_000n * 10n ** BigInt(decimals));
      tokens[symbol] = { address: await contract.getAddress(), decimals };
    }
    return { network: entry.id as NetworkId, entry, node, chainId, blockTimeSec, tokens };
  } catch (err) {
    await node.stop();
    throw err;
  }
}

/** CHAIN_* variables of docs/chains.md for this chain (test mode; 2 confirmations: paid within seconds). */
export function chainEnv(c: DevEvmChain): Record<string, string> {
  const p = `CHAIN_${c.network.toUpperCase()}_TEST_`;
  const env: Record<string, string> = {
    [`${p}RPC_URL`]: c.node.url,
    [`${p}CHAIN_ID`]: String(c.chainId),
    [`${p}CONFIRMATIONS`]: '2',
    [`${p}POLL_INTERVAL_MS`]: '500',
  };
  for (const [symbol, t] of Object.entries(c.tokens)) {
    env[`${p}${symbol}_CONTRACT`] = t.address;
    env[`${p}${symbol}_DECIMALS`] = String(t.decimals);
  }
  return env;
}
