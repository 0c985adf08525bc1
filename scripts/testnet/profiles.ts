import { parseUnits } from 'ethers';
import { NETWORKS as REGISTRY, type NetworkEntry } from '../../chains/registry.js';
import type { EntryFamily, TestnetProfile } from '../../chains/networks/entry.js';
import type { NetworkId } from '../../chains/vocabulary.js';
import { readDevnetState, type DevnetState } from '../../src/cli/devnet.js';

// One profile per public testnet, built from the network registry (chains/registry.ts: each entry's test mode and its
// `testnet` block): where its RPC is, what chain it must be, which token contracts and decimals, where its faucets and
// explorer are, and how much gas the run hands to the merchant's wallets. The profile's name is the entry's
// `testnet.profile` (sepolia, bsc-testnet, base-sepolia, ...). Every value can be overridden from the environment
// (prefix derived from the profile's name, docs/testnets.md). `--local` swaps the chain for the local chain of
// `npm run dev` that serves the same network (read from its state file) and keeps the rest.

export type Family = EntryFamily;
export type TokenSymbol = 'USDT' | 'USDC';
/** A profile's name: an entry's `testnet.profile`. */
export type NetworkName = string;

/** The registry's entries that have a public testnet profile, in the registry's order. */
function profiledEntries(): Array<NetworkEntry & { test: { testnet: TestnetProfile } }> {
  return (REGISTRY as readonly NetworkEntry[]).filter((n): n is NetworkEntry & { test: { testnet: TestnetProfile } } => !!n.test.testnet);
}

/** Every profile's name (`--network`), from the registry. */
export const PROFILE_NAMES: readonly NetworkName[] = profiledEntries().map((n) => n.test.testnet.profile);

/**
 * The environment prefix of a profile's overrides: its name in capitals, `-` as `_` (SEPOLIA, BSC_TESTNET,
 * SOLANA_DEVNET, BASE_SEPOLIA, ARBITRUM_SEPOLIA, OP_SEPOLIA, POLYGON_AMOY). TRON's profile is named after its testnet
 * alone (nile): its prefix says the family too, TRON_NILE, as it always has.
 */
export function envPrefixOf(entry: NetworkEntry, profile: string): string {
  const p = profile.toUpperCase().replace(/-/g, '_');
  return entry.family === 'tron' ? `TRON_${p}` : p;
}

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
  /** The service's network id (CHAIN_<NET>_TEST_*): the registry entry the profile comes from. */
  serviceNetwork: NetworkId;
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
  const entry = profiledEntries().find((n) => n.test.testnet.profile === name);
  if (!entry) throw new Error(`no testnet profile ${name}; one of ${PROFILE_NAMES.join(', ')}`);
  const t = entry.test.testnet;
  const p = envPrefixOf(entry, name);
  // TRON: the RPC is java-tron's HTTP API (its full host), the tokens' default faucet TronGrid's; a TronGrid key may be
  // sent as a header. Solana: no chain id, the cluster's genesis hash instead.
  const rpcEnv = entry.family === 'tron' ? `${p}_FULL_HOST` : `${p}_RPC_URL`;
  const rpcRaw = text(env, rpcEnv, t.publicRpcUrl);
  const rpcUrl = entry.family === 'tron' ? rpcRaw.replace(/\/+$/, '') : rpcRaw;
  const apiKey = entry.family === 'tron' ? env.TRON_PRO_API_KEY?.trim() : undefined;
  const chainId = entry.family === 'solana' || !entry.test.chainId ? null : BigInt(text(env, `${p}_CHAIN_ID`, entry.test.chainId));
  const native = entry.nativeCoin;
  // The issuer's test tokens first (USDC on most testnets), then a symbol the testnet lacks, if set from the
  // environment (Sepolia has no official USDT: SEPOLIA_USDT names one you deployed).
  const tokens = [
    ...entry.test.tokens.map((x) => token(env, p, x.symbol, { address: x.address, decimals: x.decimals }, t.tokenFaucet)),
    ...(['USDT', 'USDC'] as const)
      .filter((s) => !entry.test.tokens.some((x) => x.symbol === s))
      .map((s) =>
        token(
          env,
          p,
          s,
          null,
          entry.family === 'solana' ? 'deploy your own (spl-token create-token --decimals 6)' : 'deploy your own (docs/testnets.md)',
        ),
      ),
  ].filter((x): x is TokenSpec => x !== null);
  return {
    name,
    title: entry.test.name,
    family: entry.family,
    serviceNetwork: entry.id as NetworkId,
    envPrefix: p,
    rpcUrl,
    rpcEnv,
    chainId,
    genesisHash: entry.family === 'solana' ? text(env, `${p}_GENESIS_HASH`, t.genesisHash ?? '') || null : null,
    tokens,
    native: { symbol: t.nativeSymbol ?? native.symbol, decimals: native.decimals, faucet: t.nativeFaucet },
    fundGas: amount(env, `${p}_FUND_GAS`, t.fundGas, native.decimals),
    feeReserve: amount(env, `${p}_FEE_RESERVE`, t.feeReserve, native.decimals),
    explorerTx:
      entry.family === 'solana'
        ? (h) => solanaExplorer(h, rpcUrl, t.publicRpcUrl, entry.test.explorerTxUrl)
        : (h) => entry.test.explorerTxUrl.replace('{tx}', entry.family === 'tron' ? h.replace(/^0x/, '') : h),
    local: false,
    rpcHeaders: apiKey ? { 'TRON-PRO-API-KEY': apiKey } : {},
  };
}

/** Solana's explorer: the cluster's page for its public RPC; any other endpoint through `cluster=custom`. */
function solanaExplorer(sig: string, rpcUrl: string, publicRpcUrl: string, template: string): string {
  if (new URL(rpcUrl).hostname === new URL(publicRpcUrl).hostname) return template.replace('{tx}', sig);
  return solanaCustomExplorer(sig, rpcUrl);
}

/** Solana's explorer shows a local validator's transactions through `cluster=custom`. */
function solanaCustomExplorer(sig: string, rpcUrl: string): string {
  return `https://explorer.solana.com/tx/${sig}?cluster=custom&customUrl=${encodeURIComponent(rpcUrl)}`;
}

/** The demo's state, extended by scripts/dev.ts with what an operator of the demo has (its service settings). */
export type LocalState = DevnetState & { operatorEnv?: Record<string, string> };

/**
 * The same profile on the local chains of `npm run dev`, matched by the service's network id: the Anvil node the demo
 * runs for that network (its fee model, its live decimals: BSC's 18), its Solana endpoint, or for Nile its TRON (the FAKE
 * java-tron wallet API over an Anvil node with Nile's chain id; TRX from the demo's faucet).
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
    explorerTx: base.family === 'solana' ? (h) => solanaCustomExplorer(h, rpcUrl) : () => null,
    local: true,
    rpcHeaders: {},
  });
  if (base.family === 'evm') {
    // One fee coin to each of the merchant's wallets, a tenth kept by the payer.
    const chain = state.evm[base.serviceNetwork];
    if (!chain) throw new Error(`the local demo runs no ${base.serviceNetwork} chain (restart \`npm run dev\` with this version)`);
    const coin = 10n ** BigInt(base.native.decimals);
    return local(chain.rpcUrl, BigInt(chain.chainId), chain.tokens, coin, coin / 10n);
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
