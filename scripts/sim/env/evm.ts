import { Contract, HDNodeWallet, NonceManager, Wallet } from 'ethers';
import { DEVNET_MNEMONIC, DEVNET_PAYER_PATH } from '../../../src/cli/devnet.js';
import { type FaultProxy, startFaultProxy } from '../../../test/support/rpc-fault-proxy.js';
import { type DevEvmChain, startDevEvmChain } from '../../devnet/evm.js';
import type { SimEvmChain } from '../contract.js';

/** The native coin (wei) `fundHotWallet` gives a fresh hot wallet: set, not added (acknowledged as gas funding). */
export const HOT_WALLET_GAS = 10n * 10n ** 18n;

// The EVM chains of a simulator run: Anvil nodes as the local demo starts them (scripts/devnet/evm.ts: a block a second,
// Tether- and FiatToken-style USDT/USDC, the devnet payer funded), each behind the RPC fault proxy for the SERVICE;
// the simulator itself talks to the node directly. Payments leave the devnet payer through one NonceManager, one at a
// time (`send`), so concurrent scenario steps never race for a nonce.

export interface SimEvm {
  chain: DevEvmChain;
  proxy: FaultProxy;
  /** CHAIN_<NETWORK>_TEST_* for the service, pointing at the proxy. */
  env: Record<string, string>;
  contract: SimEvmChain;
  /** Sends `amount` base units of `token` from the payer to `to`; resolves with the tx hash once mined. */
  pay(token: 'USDT' | 'USDC', to: string, amount: bigint): Promise<string>;
  /** After a reorg dropped payer transactions: the next payment reads the payer's nonce from the node again. */
  resync(): Promise<void>;
  /** Gas and tokens for a merchant's refund hot wallet; the token transfers' hashes. */
  fundHotWallet(address: string, tokenUnits: bigint): Promise<string[]>;
  stop(): Promise<void>;
}

/** Confirmations the service requires in the simulator: reorgs of up to SIM_CONFIRMATIONS - 1 blocks must be absorbed. */
export const SIM_CONFIRMATIONS = 3;

export async function startSimEvm(network: 'ethereum' | 'bsc', seed: number): Promise<SimEvm> {
  const chain = network === 'ethereum' ? await startDevEvmChain('ethereum', 31337, 6) : await startDevEvmChain('bsc', 97, 18);
  const proxy = await startFaultProxy({ upstream: chain.node.url, seed });
  const payer = new NonceManager(
    new Wallet(HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, DEVNET_PAYER_PATH).privateKey, chain.node.provider),
  );
  const queue = { tail: Promise.resolve() as Promise<unknown> };
  const serial = <T>(f: () => Promise<T>): Promise<T> => {
    const next = queue.tail.then(f, f);
    queue.tail = next.catch(() => {});
    return next;
  };
  const transfer = (token: 'USDT' | 'USDC', to: string, amount: bigint) =>
    serial(async () => {
      const c = new Contract(chain.tokens[token].address, ['function transfer(address to, uint256 value)'], payer);
      return (await c.getFunction('transfer')(to, amount)) as { hash: string; wait(): Promise<unknown> };
    });
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
    async pay(token, to, amount) {
      const tx = await transfer(token, to, amount);
      // A reorg can drop the transaction for good: the payer gives up after 30 s, as a wallet would show it failed.
      const dropped = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`payment ${tx.hash} never mined`)), 30_000).unref(),
      );
      await Promise.race([tx.wait(), dropped]);
      return tx.hash;
    },
    resync: () =>
      serial(async () => {
        payer.reset();
      }),
    async fundHotWallet(address, tokenUnits) {
      await chain.node.provider.send('anvil_setBalance', [address, `0x${HOT_WALLET_GAS.toString(16)}`]);
      const txs = [];
      for (const t of ['USDT', 'USDC'] as const) txs.push(await transfer(t, address, tokenUnits * 10n ** BigInt(chain.tokens[t].decimals)));
      await Promise.all(txs.map((t) => t.wait()));
      return txs.map((t) => t.hash);
    },
    async stop() {
      await proxy.close();
      await chain.node.stop();
    },
  };
}
