import { Contract, HDNodeWallet, type JsonRpcProvider, Wallet } from 'ethers';
import { NETWORKS } from '../../chains/registry.js';
import { HOT_WALLET_SLOT, type KeyDeriver } from '../../chains/types.js';
import type { EntryFamily } from '../../chains/networks/entry.js';
import type { NetworkId } from '../../chains/vocabulary.js';
import { DEVNET_MNEMONIC, DEVNET_PAYER_PATH } from '../../src/cli/devnet.js';
import { loadChainSettings } from '../../src/watcher/config.js';
import { createChainAdapter } from '../../src/watcher/adapter-factory.js';
import { normalizeTronAddress, tronToEvmHex } from '../../chains/tron/address.js';
import type { DevEvmChain } from './evm.js';
import type { FakeSolanaValidator } from './solana-rpc/fake-validator.js';
import { moveTrx, type DevTronChain } from './tron.js';

// The demo merchant's refund hot wallets, funded with gas and every token on every local chain, so that a refund
// (and, on Solana, the deposit-account setup the same wallet pays for) works without an operator step. On TRON the
// TRX is set in the fake java-tron's ledger (it has no TRX transfer) and the tokens move on the Anvil node under it.

export interface DevSolana {
  validator: FakeSolanaValidator;
  mints: string[];
}

/** 10 of the fee coin (ETH, BNB, POL); 1,000 of each token: enough for many demo refunds and sweeps. */
export const EVM_GAS_WEI = 10n * 10n ** 18n;
const TOKEN_UNITS = 1_000n;
/** 10 SOL: fees and the rent of the deposit token accounts the wallet creates. */
const SOL_LAMPORTS = 10_000_000_000n;
/** 1,000 TRX: bandwidth and the energy burned by TRC-20 transfers (the fake prices energy at 100 sun). */
const TRX_SUN = 1_000_000_000n;

export async function fundRefundWallets(i: {
  env: Record<string, string | undefined>;
  keys: KeyDeriver;
  account: number;
  evm: DevEvmChain[];
  solana?: DevSolana;
  tron?: DevTronChain;
}): Promise<string[]> {
  const funded: string[] = [];
  const adapter = (network: NetworkId) => {
    const settings = loadChainSettings(i.env, network, 'test');
    if (!settings) throw new Error(`no test settings for ${network}`);
    return createChainAdapter(settings, i.env);
  };
  const hotWallet = async (network: NetworkId) =>
    (await adapter(network).deriveHotWallet(i.keys, i.account, HOT_WALLET_SLOT.refunds)).address;
  for (const chain of i.evm) {
    const address = await hotWallet(chain.network);
    await chain.node.provider.send('anvil_setBalance', [address, `0x${EVM_GAS_WEI.toString(16)}`]);
    await sendTokens(chain.node.provider, Object.values(chain.tokens), address);
    funded.push(chain.network);
  }
  if (i.solana) {
    const network = networkOfFamily('solana');
    const address = await hotWallet(network);
    i.solana.validator.airdrop(address, SOL_LAMPORTS);
    for (const mint of i.solana.mints) i.solana.validator.setTokenAccount({ mint, owner: address, amount: TOKEN_UNITS * 1_000_000n });
    funded.push(network);
  }
  if (i.tron) {
    const network = networkOfFamily('tron');
    const address = normalizeTronAddress(await hotWallet(network))!;
    moveTrx(i.tron.fake, normalizeTronAddress(i.tron.payer)!, address, TRX_SUN);
    // The tokens move on the Anvil node under the fake: the same Transfer events a TRC-20 transfer leaves.
    await sendTokens(
      i.tron.node.provider,
      (['USDT', 'USDC'] as const).map((s) => ({ address: i.tron!.evmTokens[s], decimals: i.tron!.tokens[s].decimals })),
      tronToEvmHex(address),
    );
    funded.push(network);
  }
  return funded;
}

/** The registry's one network of a non-EVM family (TRON, Solana). */
export function networkOfFamily(family: Exclude<EntryFamily, 'evm'>): NetworkId {
  const n = NETWORKS.find((e) => e.family === family);
  if (!n) throw new Error(`the registry has no ${family} network`);
  return n.id;
}

/** TOKEN_UNITS of each token from the devnet payer to `to`, on an Anvil node. */
async function sendTokens(provider: JsonRpcProvider, tokens: Array<{ address: string; decimals: number }>, to: string): Promise<void> {
  const payer = new Wallet(HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, DEVNET_PAYER_PATH).privateKey, provider);
  let nonce = await provider.getTransactionCount(payer.address, 'pending');
  for (const token of tokens) {
    // One ABI for both token shapes: Tether-style transfer returns nothing, so no return value is decoded.
    const contract = new Contract(token.address, ['function transfer(address to, uint256 value)'], payer);
    const tx = (await contract.getFunction('transfer')(to, TOKEN_UNITS * 10n ** BigInt(token.decimals), { nonce: nonce++ })) as {
      wait(): Promise<unknown>;
    };
    await tx.wait();
  }
}
