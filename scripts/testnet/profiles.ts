import { parseUnits } from 'ethers';
import { readDevnetState, type DevnetState } from '../../src/cli/devnet.js';

// One profile per public testnet: where its RPC is, what chain it must be, which token contracts and decimals, where
// its faucets and explorer are, and how much gas the run hands to the merchant's wallets. Every value can be
// overridden from the environment (prefix per network, docs/testnets.md). `--local` swaps the chain for the matching
// local chain of `npm run dev` (read from its state file) and keeps the rest.

export type Family = 'evm' | 'solana' | 'tron';
export type TokenSymbol = 'USDT' | 'USDC';
export type NetworkName = 'sepolia' | 'bsc-testnet' | 'solana-devnet' | 'nile';
export const NETWORKS: readonly NetworkName[] = ['sepolia', 'bsc-testnet', 'solana-devnet', 'nile'];

export interface TokenSpec {
  symbol: TokenSymbol;
  address: string;
  decimals: number;
  faucet: string;
}

export interface Profile {
  name: NetworkName;
  title: string;
  family: Family;
  /** The service's network id (CHAIN_<NET>_TEST_*). */
  serviceNetwork: 'ethereum' | 'bsc' | 'solana' | 'tron';
  /** Environment prefix of this profile's overrides. */
  envPrefix: string;
  rpcUrl: string;
  /** The variable that sets `rpcUrl`. */
  rpcEnv: string;
  /** EVM chain id, or TRON's (the last 4 bytes of its genesis block id, as eth_chainId answers it). */
  chainId: bigint | null;
  /** Solana genesis hash; null accepts any (local chains), recorded in the report. */
  genesisHash: string | null;
  tokens: TokenSpec[];
  native: { symbol: string; decimals: number; faucet: string };
  /** Native coin handed to each of the merchant's refund hot wallet and subscription charger, in base units. */
  fundGas: bigint;
  /** Native coin the payer keeps for its own transactions' fees, in base units. */
  feeReserve: bigint;
  explorerTx: (hash: string) => string | null;
  local: boolean;
  /** Extra HTTP headers for the RPC (TronGrid key); never printed. */
  rpcHeaders: Record<string, string>;
  /** TRON: the Ethereum-compatible JSON-RPC that answers eth_chainId, when not `<rpcUrl>/jsonrpc` (the demo's Anvil). */
  jsonRpcUrl?: string;
  /**
   * TRON on the demo only: its TRX faucet (scripts/devnet/tron.ts), which stands in for TRX transfers because the
   * FAKE java-tron executes TriggerSmartContract only. Unset everywhere else: TRX goes out as a signed transfer.
   */
  trxFaucetUrl?: string;
}

type Env = Record<string, string | undefined>;

function text(env: Env, name: string, fallback: string): string {
  const v = env[name]?.trim();
  return v ? v : fallback;
}

function token(
  env: Env,
  prefix: string,
  symbol: TokenSymbol,
  dflt: { address: string; decimals: number } | null,
  faucet: string,
): TokenSpec | null {
  const address = env[`${prefix}_${symbol}`]?.trim() || dflt?.address;
  if (!address) return null;
  const dec = env[`${prefix}_${symbol}_DECIMALS`]?.trim();
  const decimals = dec !== undefined && dec !== '' ? Number(dec) : (dflt?.decimals ?? 6);
  if (!Number.isInteger(decimals) || decimals < 2 || decimals > 30)
    throw new Error(`${prefix}_${symbol}_DECIMALS must be an integer 2..30`);
  return { symbol, address, decimals, faucet: env[`${prefix}_${symbol}_FAUCET`]?.trim() || faucet };
}

function amount(env: Env, name: string, fallback: string, decimals: number): bigint {
  const v = text(env, name, fallback);
  if (!/^\d+(\.\d+)?$/.test(v)) throw new Error(`${name} must be a plain decimal, not ${v}`);
  return parseUnits(v, decimals);
}

export function publicProfile(name: NetworkName, env: Env): Profile {
  switch (name) {
    case 'sepolia': {
      const p = 'SEPOLIA';
      return {
        name,
        title: 'Ethereum Sepolia',
        family: 'evm',
        serviceNetwork: 'ethereum',
        envPrefix: p,
        rpcUrl: text(env, `${p}_RPC_URL`, 'https://ethereum-sepolia-rpc.publicnode.com'),
        rpcEnv: `${p}_RPC_URL`,
        chainId: BigInt(text(env, `${p}_CHAIN_ID`, '11155111')),
        genesisHash: null,
        tokens: [
          // Circle's test USDC; Sepolia has no official USDT: set SEPOLIA_USDT to a token you deployed or were given.
          token(env, p, 'USDC', { address: '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238', decimals: 6 }, 'https://faucet.circle.com'),
          token(env, p, 'USDT', null, 'deploy your own (docs/testnets.md)'),
        ].filter((t): t is TokenSpec => t !== null),
        native: { symbol: 'ETH', decimals: 18, faucet: 'https://cloud.google.com/application/web3/faucet/ethereum/sepolia' },
        fundGas: amount(env, `${p}_FUND_GAS`, '0.01', 18),
        feeReserve: amount(env, `${p}_FEE_RESERVE`, '0.01', 18),
        explorerTx: (h) => `https://sepolia.etherscan.io/tx/${h}`,
        local: false,
        rpcHeaders: {},
      };
    }
    case 'bsc-testnet': {
      const p = 'BSC_TESTNET';
      return {
        name,
        title: 'BNB Smart Chain testnet',
        family: 'evm',
        serviceNetwork: 'bsc',
        envPrefix: p,
        rpcUrl: text(env, `${p}_RPC_URL`, 'https://bsc-testnet-rpc.publicnode.com'),
        rpcEnv: `${p}_RPC_URL`,
        chainId: BigInt(text(env, `${p}_CHAIN_ID`, '97')),
        genesisHash: null,
        tokens: [
          // The faucet's pegged test tokens, 18 decimals like their mainnet counterparts on BSC.
          token(
            env,
            p,
            'USDT',
            { address: '0x337610d27c682E347C9cD60BD4b3b107C9d34dDd', decimals: 18 },
            'https://www.bnbchain.org/en/testnet-faucet',
          ),
          token(
            env,
            p,
            'USDC',
            { address: '0x64544969ed7EBf5f083679233325356EbE738930', decimals: 18 },
            'https://www.bnbchain.org/en/testnet-faucet',
          ),
        ].filter((t): t is TokenSpec => t !== null),
        native: { symbol: 'tBNB', decimals: 18, faucet: 'https://www.bnbchain.org/en/testnet-faucet' },
        fundGas: amount(env, `${p}_FUND_GAS`, '0.005', 18),
        feeReserve: amount(env, `${p}_FEE_RESERVE`, '0.005', 18),
        explorerTx: (h) => `https://testnet.bscscan.com/tx/${h}`,
        local: false,
        rpcHeaders: {},
      };
    }
    case 'solana-devnet': {
      const p = 'SOLANA_DEVNET';
      const rpcUrl = text(env, `${p}_RPC_URL`, 'https://api.devnet.solana.com');
      return {
        name,
        title: 'Solana Devnet',
        family: 'solana',
        serviceNetwork: 'solana',
        envPrefix: p,
        rpcUrl,
        rpcEnv: `${p}_RPC_URL`,
        chainId: null,
        genesisHash: text(env, `${p}_GENESIS_HASH`, 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG'),
        tokens: [
          token(env, p, 'USDC', { address: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU', decimals: 6 }, 'https://faucet.circle.com'),
          token(env, p, 'USDT', null, 'deploy your own (spl-token create-token --decimals 6)'),
        ].filter((t): t is TokenSpec => t !== null),
        native: { symbol: 'SOL', decimals: 9, faucet: 'https://faucet.solana.com' },
        fundGas: amount(env, `${p}_FUND_GAS`, '0.02', 9),
        feeReserve: amount(env, `${p}_FEE_RESERVE`, '0.02', 9),
        explorerTx: (h) => solanaExplorer(h, rpcUrl),
        local: false,
        rpcHeaders: {},
      };
    }
    case 'nile': {
      const p = 'TRON_NILE';
      const apiKey = env.TRON_PRO_API_KEY?.trim();
      return {
        name,
        title: 'TRON Nile',
        family: 'tron',
        serviceNetwork: 'tron',
        envPrefix: p,
        rpcUrl: text(env, `${p}_FULL_HOST`, 'https://nile.trongrid.io').replace(/\/+$/, ''),
        rpcEnv: `${p}_FULL_HOST`,
        chainId: BigInt(text(env, `${p}_CHAIN_ID`, '0xcd8690dc')),
        genesisHash: null,
        tokens: [
          token(env, p, 'USDT', { address: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf', decimals: 6 }, 'https://nileex.io/join/getJoinPage'),
        ].filter((t): t is TokenSpec => t !== null),
        native: { symbol: 'TRX', decimals: 6, faucet: 'https://nileex.io/join/getJoinPage' },
        fundGas: amount(env, `${p}_FUND_GAS`, '100', 6),
        feeReserve: amount(env, `${p}_FEE_RESERVE`, '100', 6),
        explorerTx: (h) => `https://nile.tronscan.org/#/transaction/${h.replace(/^0x/, '')}`,
        local: false,
        rpcHeaders: apiKey ? { 'TRON-PRO-API-KEY': apiKey } : {},
      };
    }
    default: {
      const never: never = name;
      return never;
    }
  }
}

/** Solana's explorer shows a local validator's transactions through `cluster=custom`. */
function solanaExplorer(sig: string, rpcUrl: string): string {
  const host = new URL(rpcUrl).hostname;
  if (host === 'api.devnet.solana.com') return `https://explorer.solana.com/tx/${sig}?cluster=devnet`;
  return `https://explorer.solana.com/tx/${sig}?cluster=custom&customUrl=${encodeURIComponent(rpcUrl)}`;
}

/** The demo's state, extended by scripts/dev.ts with what an operator of the demo has (its service settings). */
export type LocalState = DevnetState & { operatorEnv?: Record<string, string> };

/**
 * The same profile on the local chains of `npm run dev`: its Anvil node (Ethereum for Sepolia, BSC for BSC testnet,
 * same decimals as the testnet), its Solana endpoint, or for Nile its TRON (the FAKE java-tron wallet API over an Anvil
 * node with Nile's chain id; TRX from the demo's faucet).
 */
export function localProfile(name: NetworkName, state: LocalState, env: Env): Profile {
  const base = publicProfile(name, env);
  const local = (
    rpcUrl: string,
    chainId: bigint | null,
    tokens: Record<string, { address: string; decimals: number }>,
    fundGas: bigint,
    feeReserve: bigint,
  ): Profile => ({
    ...base,
    title: `${base.title} (local: npm run dev)`,
    rpcUrl,
    chainId,
    genesisHash: null,
    // The testnet's default token first (USDC on Sepolia and Devnet), then the other the demo deployed.
    tokens: [...new Set([...base.tokens.map((t) => t.symbol), 'USDT', 'USDC'] as TokenSymbol[])].flatMap((s) => {
      const t = tokens[s];
      return t ? [{ symbol: s, address: t.address, decimals: t.decimals, faucet: 'funded by npm run dev' }] : [];
    }),
    native: { ...base.native, faucet: 'funded by npm run dev' },
    fundGas,
    feeReserve,
    explorerTx: base.family === 'solana' ? (h) => solanaExplorer(h, rpcUrl) : () => null,
    local: true,
    rpcHeaders: {},
  });
  if (base.family === 'evm') {
    const chain = state.evm[base.serviceNetwork];
    if (!chain) throw new Error(`the local demo runs no ${base.serviceNetwork} chain`);
    return local(chain.rpcUrl, BigInt(chain.chainId), chain.tokens, 10n ** 18n, 10n ** 17n);
  }
  if (base.family === 'solana') {
    if (!state.solana) throw new Error('the local demo started no Solana endpoint (see its output)');
    return local(state.solana.rpcUrl, null, state.solana.tokens, 10n ** 9n, 10n ** 8n);
  }
  if (!state.tron) throw new Error('the running `npm run dev` has no TRON (restart it with this version)');
  const tron = state.tron;
  // 100 TRX to each of the hot wallet and the charger (energy is burned at the fake's 100 sun), 10 kept for fees.
  return {
    ...local(tron.fullHost, BigInt(tron.chainId), tron.tokens, 100n * 10n ** 6n, 10n * 10n ** 6n),
    jsonRpcUrl: tron.rpcUrl,
    trxFaucetUrl: tron.faucetUrl,
  };
}

export function readLocalState(env: Env): LocalState {
  return readDevnetState(env) as LocalState;
}

/** RPC URLs may carry an API key in the path or query (Infura, Alchemy, Helius): what is printed keeps the host only. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return u.pathname.length > 1 || u.search ? `${u.protocol}//${u.host}/…` : `${u.protocol}//${u.host}`;
  } catch {
    return 'invalid URL';
  }
}
