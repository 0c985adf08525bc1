import { HDNodeWallet, Wallet } from 'ethers';
import { DEVNET_MNEMONIC, DEVNET_PAYER_PATH } from '../../../src/cli/devnet.js';
import { type FaultProxy, startFaultProxy } from '../../../test/support/rpc-fault-proxy.js';
import { type DevEvmChain, startDevEvmChain } from '../../devnet/evm.js';
import type { SimEvmChain } from '../contract.js';
import { type EvmPayer, evmPayer } from '../payer.js';

/** The native coin (wei) `fundHotWallet` gives a fresh hot wallet: set, not added (acknowledged as gas funding). */
export const HOT_WALLET_GAS = 10n * 10n ** 18n;

// The EVM chains of a simulator run: Anvil nodes as the local demo starts them (scripts/devnet/evm.ts: a block a second,
// Tether- and FiatToken-style USDT/USDC, the devnet payer funded), each behind the RPC fault proxy for the SERVICE;
// the simulator itself talks to the node directly. Payments leave the devnet payer through its wallet (../payer.ts):
// one at a time at the nonces it keeps, re-broadcast with the same signed bytes when a reorg made them vanish.

export interface SimEvm {
  chain: DevEvmChain;
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

export async function startSimEvm(network: 'ethereum' | 'bsc', seed: number): Promise<SimEvm> {
  const chain = network === 'ethereum' ? await startDevEvmChain('ethereum', 31337, 6) : await startDevEvmChain('bsc', 97, 18);
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
