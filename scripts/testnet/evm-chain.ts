import { Contract, HDNodeWallet, JsonRpcProvider, Network, NonceManager, Wallet } from 'ethers';
import { DEVNET_MNEMONIC, DEVNET_PAYER_PATH } from '../../src/cli/devnet.js';
import type { ChainFactory, PayerChain } from './chain.js';
import { payerSecretNames } from './chain.js';
import type { TokenSpec } from './profiles.js';

// Sepolia and BSC testnet (and their Anvil stand-ins): ethers with a locally held key. Transfers go out with the
// Tether-compatible ABI (no return value decoded); success is the receipt's status.

const ABI = [
  'function transfer(address to, uint256 value)',
  'function approve(address spender, uint256 value)',
  'function balanceOf(address) view returns (uint256)',
  'function decimals() view returns (uint8)',
];

export const createEvmChain: ChainFactory = async (profile, env) => {
  // A fixed network: nothing is detected in the background (an unreachable RPC fails the call that reaches it, once);
  // the chain id is checked by preflight through eth_chainId itself.
  const network = Network.from(profile.chainId ?? 1n);
  const provider = new JsonRpcProvider(profile.rpcUrl, network, { staticNetwork: network, pollingInterval: profile.local ? 250 : 4000 });
  const wallet = new Wallet(payerKey(profile.local, payerSecretNames(profile), env), provider);
  // Nonces counted here, not asked of the node before each send: a node may report a transaction's receipt before its
  // sender's pending count includes it (Anvil's automine does), and the next send would reuse the nonce.
  const sender = new NonceManager(wallet);
  const contract = (t: TokenSpec) => new Contract(t.address, ABI, sender);
  const send = async (p: Promise<unknown>): Promise<string> => {
    const tx = (await p.catch((err: unknown) => {
      sender.reset(); // a send the node refused used no nonce: count again from the node
      throw err;
    })) as { hash: string; wait(confirms?: number): Promise<{ status: number | null } | null> };
    const receipt = await tx.wait(1);
    if (receipt?.status !== 1) throw new Error(`transaction ${tx.hash} reverted`);
    return tx.hash;
  };
  const chain: PayerChain = {
    payer: wallet.address,
    async identity() {
      return { value: BigInt(await provider.send('eth_chainId', [])).toString(), method: 'eth_chainId' };
    },
    async tokenDecimals(t) {
      if ((await provider.getCode(t.address)) === '0x') return null;
      return Number(await (contract(t).getFunction('decimals')() as Promise<bigint>));
    },
    tokenBalance: async (t, owner) => (await contract(t).getFunction('balanceOf')(owner)) as bigint,
    nativeBalance: (owner) => provider.getBalance(owner),
    pay: (t, to, amount) => send(contract(t).getFunction('transfer')(to, amount)),
    transferToken: (t, to, amount) => send(contract(t).getFunction('transfer')(to, amount)),
    sendNative: (to, value) => send(sender.sendTransaction({ to, value })),
    async authorize(t, spender, amount, o) {
      const hashes: string[] = [];
      if (o.resetFirst) hashes.push(await send(contract(t).getFunction('approve')(spender, 0n)));
      hashes.push(await send(contract(t).getFunction('approve')(spender, amount)));
      return hashes;
    },
    async succeeded(hash) {
      return (await provider.getTransactionReceipt(hash))?.status === 1;
    },
    async close() {
      provider.destroy();
    },
  };
  return chain;
};

/** Local runs pay from the demo's funded Anvil account; testnets from `<P>_PAYER_KEY` or `<P>_PAYER_MNEMONIC`. */
function payerKey(local: boolean, names: string[], env: Record<string, string | undefined>): string {
  if (local) return HDNodeWallet.fromPhrase(DEVNET_MNEMONIC, undefined, DEVNET_PAYER_PATH).privateKey;
  const [keyName, mnemonicName] = names as [string, string];
  const key = env[keyName]?.trim();
  if (key) {
    if (!/^(0x)?[0-9a-fA-F]{64}$/.test(key)) throw new Error(`${keyName} must be 32 bytes of hex`);
    return key.startsWith('0x') ? key : `0x${key}`;
  }
  const phrase = env[mnemonicName]?.trim();
  if (phrase) {
    try {
      return HDNodeWallet.fromPhrase(phrase, undefined, "m/44'/60'/0'/0/0").privateKey;
    } catch {
      throw new Error(`${mnemonicName} is not a valid BIP39 mnemonic`);
    }
  }
  throw new Error(`no payer wallet: set ${keyName} (hex private key) or ${mnemonicName} (m/44'/60'/0'/0/0)`);
}
