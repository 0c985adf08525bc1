import { getBytes, HDNodeWallet, Wallet as EthersWallet } from 'ethers';
import type { TxSigner, Wallet } from '../../../chains/types.js';
import { normalizeTronAddress } from '../../../chains/tron/address.js';
import { DEVNET_MNEMONIC, DEVNET_PAYER_PATH } from '../../../src/cli/devnet.js';
import { startFaultProxy } from '../../../test/support/rpc-fault-proxy.js';
import { type DevTronChain, startDevTronChain } from '../../devnet/tron.js';
import { type EvmPayer, evmPayer } from '../payer.js';
import { type EvmReorgParams, type EvmReorgResult, reorgEvm } from '../faults/chain-evm.js';
import type { SimChains } from '../contract.js';
import { tronHex } from '../invariants/tron-chain.js';
import { healedRates, type SimOtherChain } from './chain.js';

// TRON for the simulator: the local demo's chain (scripts/devnet/tron.ts: THE FAKE java-tron wallet API over its own
// Anvil node, a block a second, 6-decimal Tether- and FiatToken-style USDT/USDC, solidified 3 blocks behind the head).
// The service reaches it through two fault proxies: one in front of the Ethereum-compatible /jsonrpc (detection,
// every JSON-RPC fault) and one in front of the wallet API (payouts: timeouts, 429 and 5xx, forwarded by path). The
// payer sends TRC-20 transfers as the demo's payer does, on the node under the fake (the fake executes TRON transfers
// there too); the invariants read the node through the fake's /jsonrpc.

/** Confirmations (solidification depth) the service requires on TRON in the simulator: the fake's own. */
export const TRON_CONFIRMATIONS = 3;
/** Sun a fresh refund hot wallet gets (fees): set in the fake's ledger from outside, acknowledged like EVM gas. */
export const TRON_HOT_WALLET_SUN = 1_000_000_000n;

export interface SimTron extends SimOtherChain {
  network: 'tron';
  chain: DevTronChain;
  contract: NonNullable<SimChains['tron']>;
  /** Another simulated wallet on the node under the fake (a subscription's customer) whose dropped transactions
   * `resync` re-sends, as the payer's; returns the undo. */
  adopt(wallet: EvmPayer): () => void;
  /** TRX for a wallet of the service that pays fees (a charger's energy, the gas station), added in the fake's ledger:
   * no transaction, acknowledged like the refund hot wallets' (sun; TRON_HOT_WALLET_SUN unless given). */
  fundFees(address: string, sun?: bigint): Promise<bigint>;
  /** As an operator does once, outside the service (docs/treasury-tron.md): `sun + liquidSun` of TRX given to `wallet`,
   * `sun` of it staked for ENERGY through the wallet API (`freezebalancev2`, signed by the wallet's key); the liquid
   * rest pays the bandwidth of its (un)delegations once the free allowance is used. */
  stakeForEnergy(wallet: Wallet, signer: TxSigner, sun: bigint, liquidSun: bigint): Promise<void>;
}

export async function startSimTron(seed: number): Promise<SimTron> {
  const chain = await startDevTronChain();
  const rpcProxy = await startFaultProxy({ upstream: `${chain.fake.url}/jsonrpc`, seed });
  const walletProxy = await startFaultProxy({ upstream: chain.fake.url, seed: seed + 1, forwardPath: true });
  // As on EVM (../payer.ts): the payer signs each transfer itself and re-broadcasts the same bytes when a reorg of the
  // node under the fake dropped it.
  const payer = evmPayer(
    new EthersWallet(HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, DEVNET_PAYER_PATH).privateKey, chain.node.provider),
    chain.node.provider,
  );
  const pay = async (token: 'USDT' | 'USDC', to: string, amount: bigint, onRebroadcast?: (hash: string) => void): Promise<string> => {
    const hex = tronHex(to);
    if (!hex) throw new Error(`tron: not an address: ${to}`);
    const tx = await payer.transfer(chain.evmTokens[token], hex, amount);
    await payer.mined(tx.hash, 60_000, onRebroadcast);
    return tx.hash;
  };
  const tokens = { USDT: chain.tokens.USDT.address, USDC: chain.tokens.USDC.address };
  const adopted = new Set<EvmPayer>();
  const fundFees = async (address: string, sun = TRON_HOT_WALLET_SUN): Promise<bigint> => {
    const canonical = normalizeTronAddress(address);
    if (!canonical) throw new Error(`tron: not an address: ${address}`);
    chain.fake.chain.setTrx(canonical, (chain.fake.chain.account(canonical)?.balanceSun ?? 0n) + sun);
    return sun;
  };
  const post = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${chain.fake.url}/${path}`, { method: 'POST', body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`tron: ${path} answered ${res.status}`);
    return (await res.json()) as Record<string, unknown>;
  };
  return {
    network: 'tron',
    chain,
    proxies: [
      { proxy: rpcProxy, protocol: 'jsonrpc' },
      { proxy: walletProxy, protocol: 'http' },
    ],
    env: {
      CHAIN_TRON_TEST_RPC_URL: rpcProxy.url,
      CHAIN_TRON_TEST_FULL_HOST: walletProxy.url,
      CHAIN_TRON_TEST_CHAIN_ID: String(chain.chainId),
      CHAIN_TRON_TEST_CONFIRMATIONS: String(TRON_CONFIRMATIONS),
      CHAIN_TRON_TEST_POLL_INTERVAL_MS: '300',
      CHAIN_TRON_TEST_RPC_TIMEOUT_MS: '2000',
      CHAIN_TRON_TEST_USDT_CONTRACT: tokens.USDT,
      CHAIN_TRON_TEST_USDT_DECIMALS: String(chain.tokens.USDT.decimals),
      CHAIN_TRON_TEST_USDC_CONTRACT: tokens.USDC,
      CHAIN_TRON_TEST_USDC_DECIMALS: String(chain.tokens.USDC.decimals),
    },
    contract: { walletApiUrl: chain.fake.url, jsonRpcUrl: `${chain.fake.url}/jsonrpc`, tokens, confirmations: TRON_CONFIRMATIONS },
    startBlockEnv: async () => ({ CHAIN_TRON_TEST_START_BLOCK: String(await chain.node.provider.getBlockNumber()) }),
    pay,
    adopt(wallet) {
      adopted.add(wallet);
      return () => adopted.delete(wallet);
    },
    fundFees,
    async stakeForEnergy(wallet, signer, sun, liquidSun) {
      await fundFees(wallet.address, sun + liquidSun);
      const tx = await post('wallet/freezebalancev2', { owner_address: wallet.address, frozen_balance: Number(sun), resource: 'ENERGY' });
      if (typeof tx.txID !== 'string') throw new Error(`tron: freezebalancev2 built no transaction: ${JSON.stringify(tx)}`);
      const sig = await signer.signSecp256k1Digest(wallet.key, getBytes(`0x${tx.txID}`));
      const sent = await post('wallet/broadcasttransaction', {
        ...tx,
        signature: [`${sig.r.slice(2)}${sig.s.slice(2)}${(27 + sig.yParity).toString(16)}`],
      });
      if (sent.result !== true) throw new Error(`tron: the stake was refused: ${JSON.stringify(sent)}`);
    },
    async fundHotWallet(address, tokenUnits) {
      await fundFees(address);
      const txIds: string[] = [];
      for (const t of ['USDT', 'USDC'] as const) {
        const h = await pay(t, address, tokenUnits * 10n ** BigInt(chain.tokens[t].decimals));
        // As the journal names a TRON transaction: java-tron's txID, bare lowercase hex (chains/tron/transfer-source.ts).
        txIds.push(h.replace(/^0x/i, '').toLowerCase());
      }
      return { txIds, native: TRON_HOT_WALLET_SUN };
    },
    // A reorg of the node under the fake, unless a block it would replace holds a transaction the fake executed (the
    // service's payouts, charges, sweeps): the fake keeps those in memory and executes them as impersonated Anvil
    // transactions, which anvil_reorg cannot put back. Run with no broadcast applying meanwhile.
    reorg: (params: EvmReorgParams): Promise<EvmReorgResult | null> =>
      chain.fake.chain.exclusive(async () => {
        const head = BigInt(await chain.node.provider.getBlockNumber());
        if (chain.fake.chain.holdsFrom(head - BigInt(params.depth) + 1n)) return null;
        return reorgEvm(chain.node.url, params);
      }),
    async resync() {
      const out = await payer.rebroadcastVanished();
      for (const w of adopted) out.push(...(await w.rebroadcastVanished()));
      return out;
    },
    async heal() {
      rpcProxy.setFaults(healedRates);
      walletProxy.setFaults(healedRates);
    },
    async stop() {
      await rpcProxy.close();
      await walletProxy.close();
      await chain.stop();
    },
  };
}
