import { HDNodeWallet, Wallet } from 'ethers';
import { networkEntry } from '../../../chains/registry.js';
import type { NetworkId, TokenSymbol } from '../../../chains/types.js';
import { DEVNET_MNEMONIC, DEVNET_PAYER_PATH, type DevnetTokenState } from '../../../src/cli/devnet.js';
import type { AnvilNode } from '../../../test/support/anvil.js';
import { deployToken, mintTo, type TokenShape } from '../../../test/support/evm-tokens/deploy.js';
import { startNetworkAnvil } from '../../../test/support/network-anvil.js';
import { type FaultProxy, startFaultProxy } from '../../../test/support/rpc-fault-proxy.js';
import type { SimEvmChain } from '../contract.js';
import { type EvmPayer, evmPayer } from '../payer.js';

/** The native coin (wei) `fundHotWallet` gives a fresh hot wallet: set, not added (acknowledged as gas funding). */
export const HOT_WALLET_GAS = 10n * 10n ** 18n;

// The EVM chains of a simulator run: an Anvil node per network started for its registry entry
// (test/support/network-anvil.ts: the L1 data fee charged on op-stack networks, a NodeInterface stand-in on arbitrum
// ones), a block a second, or the entry's own rate where it is faster (Arbitrum: 4 a second); Tether- and
// FiatToken-style USDT and USDC with the decimals the issuers use there, the devnet payer funded; each behind the RPC
// fault proxy for the SERVICE; the simulator itself talks to the node directly. Payments leave the devnet payer through its wallet (../payer.ts):
// one at a time at the nonces it keeps, re-broadcast with the same signed bytes when a reorg made them vanish.

/** One EVM chain of the simulator: its node, chain id and tokens. */
export interface SimEvmNode {
  network: NetworkId;
  node: AnvilNode;
  chainId: number;
  tokens: Record<TokenSymbol, DevnetTokenState>;
}

/** Below this block time (ms) a network's node mines at its own rate. */
const FAST_BLOCK_MS = 500;
const SHAPES: Record<TokenSymbol, TokenShape> = { USDT: 'tether', USDC: 'fiat' };

/** Anvil for `network`'s registry entry at its test chain id, USDT and USDC deployed, the devnet payer funded. */
async function startSimEvmNode(network: NetworkId): Promise<SimEvmNode> {
  const entry = networkEntry(network);
  if (entry?.family !== 'evm') throw new Error(`${network} is not an EVM network of the registry`);
  const chainId = Number(entry.test.chainId);
  // A block a second, as the local demo mines; a network whose blocks come faster than twice a second at its own rate.
  const blockTimeSec = entry.blockTimeMs < FAST_BLOCK_MS ? entry.blockTimeMs / 1000 : 1;
  const node = await startNetworkAnvil(entry, { chainId, blockTimeSec });
  try {
    const deployer = new Wallet(HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, "m/44'/60'/0'/0/0").privateKey, node.provider);
    const payer = HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, DEVNET_PAYER_PATH).address;
    const issued = entry.live.tokens;
    const tokens = {} as Record<TokenSymbol, DevnetTokenState>;
    for (const symbol of ['USDT', 'USDC'] as const) {
      // The decimals the issuers use on this network (BSC: 18); a token not issued there takes the other's.
      const decimals = (issued.find((t) => t.symbol === symbol) ?? issued[0])?.decimals ?? 6;
      const contract = await deployToken(deployer, SHAPES[symbol], symbol, decimals);
      await mintTo(contract, SHAPES[symbol], payer, 1_000_000n * 10n ** BigInt(decimals));
      tokens[symbol] = { address: await contract.getAddress(), decimals };
    }
    return { network, node, chainId, tokens };
  } catch (err) {
    await node.stop();
    throw err;
  }
}

export interface SimEvm {
  chain: SimEvmNode;
  proxy: FaultProxy;
  /** CHAIN_<NETWORK>_TEST_* for the service, pointing at the proxy. */
  env: Record<string, string>;
  contract: SimEvmChain;
  /** Sends `amount` base units of `token` from the payer to `to`; resolves with the tx hash once mined (re-broadcast
   * whenever it vanished from the node meanwhile: `onRebroadcast`). */
  pay(token: 'USDT' | 'USDC', to: string, amount: bigint, onRebroadcast?: (hash: string) => void): Promise<string>;
  /** After a reorg: the payer's transfers it dropped are broadcast again (same nonce, same hash); returns their hashes.
   * So are those of every wallet `adopt`ed (the subscriptions' customers). */
  resync(): Promise<string[]>;
  /** Another simulated wallet on this chain whose dropped transactions `resync` re-sends; returns the undo. */
  adopt(wallet: EvmPayer): () => void;
  /** Gas (set on the node: no transaction) and tokens for a merchant's refund hot wallet; the token transfers' hashes
   * as the journal records them (lowercase 0x hex, chains/evm/transfer-log.ts). */
  fundHotWallet(address: string, tokenUnits: bigint): Promise<string[]>;
  stop(): Promise<void>;
}

/** Confirmations the service requires in the simulator: reorgs of up to SIM_CONFIRMATIONS - 1 blocks must be absorbed. */
export const SIM_CONFIRMATIONS = 3;

export async function startSimEvm(network: NetworkId, seed: number): Promise<SimEvm> {
  const chain = await startSimEvmNode(network);
  const proxy = await startFaultProxy({ upstream: chain.node.url, seed });
  const payer = evmPayer(
    new Wallet(HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, DEVNET_PAYER_PATH).privateKey, chain.node.provider),
    chain.node.provider,
  );
  const transfer = (token: 'USDT' | 'USDC', to: string, amount: bigint) => payer.transfer(chain.tokens[token].address, to, amount);
  const adopted = new Set<EvmPayer>();
  const p = `CHAIN_${network.toUpperCase()}_TEST_`;
  return {
    chain,
    proxy,
    env: {
      [`${p}RPC_URL`]: proxy.url,
      [`${p}CHAIN_ID`]: String(chain.chainId),
      [`${p}CONFIRMATIONS`]: String(SIM_CONFIRMATIONS),
      [`${p}POLL_INTERVAL_MS`]: '300',
      [`${p}RPC_TIMEOUT_MS`]: '2000',
      [`${p}USDT_CONTRACT`]: chain.tokens.USDT.address,
      [`${p}USDT_DECIMALS`]: String(chain.tokens.USDT.decimals),
      [`${p}USDC_CONTRACT`]: chain.tokens.USDC.address,
      [`${p}USDC_DECIMALS`]: String(chain.tokens.USDC.decimals),
    },
    contract: {
      network,
      rpcUrl: chain.node.url,
      chainId: chain.chainId,
      tokens: { USDT: chain.tokens.USDT.address, USDC: chain.tokens.USDC.address },
      confirmations: SIM_CONFIRMATIONS,
      decimals: { USDT: chain.tokens.USDT.decimals, USDC: chain.tokens.USDC.decimals },
    },
    async pay(token, to, amount, onRebroadcast) {
      const tx = await transfer(token, to, amount);
      // The payer re-sends a transfer a reorg dropped; it gives up after 60 s, as a wallet would show it failed.
      await payer.mined(tx.hash, 60_000, onRebroadcast);
      return tx.hash;
    },
    async resync() {
      const out = await payer.rebroadcastVanished();
      for (const w of adopted) out.push(...(await w.rebroadcastVanished()));
      return out;
    },
    adopt(wallet) {
      adopted.add(wallet);
      return () => adopted.delete(wallet);
    },
    async fundHotWallet(address, tokenUnits) {
      await chain.node.provider.send('anvil_setBalance', [address, `0x${HOT_WALLET_GAS.toString(16)}`]);
      const txs = [];
      for (const t of ['USDT', 'USDC'] as const) txs.push(await transfer(t, address, tokenUnits * 10n ** BigInt(chain.tokens[t].decimals)));
      await Promise.all(txs.map((t) => payer.mined(t.hash, 60_000)));
      return txs.map((t) => t.hash.toLowerCase());
    },
    async stop() {
      await proxy.close();
      await chain.node.stop();
    },
  };
}
