import { NETWORKS, type NetworkEntry } from '../../chains/registry.js';
import { resolveTokens, type LookalikeSetting, type TokenSetting } from '../../chains/tokens/registry.js';
import { defaultExplorerTxUrl, explorerTxUrlSetting } from '../../chains/explorers.js';
import { chainEnvPrefix } from '../../chains/env-names.js';
import { NETWORK_IDS, TOKEN_SYMBOLS, type ChainFamily, type Mode, type NetworkId } from '../../chains/types.js';
import { lookalikeSettings } from './lookalike-config.js';

// Typed loader of the chain and watcher settings from an environment record (names in docs/chains.md).
// A chain (network + mode) is enabled when its RPC URL is set. Errors name the variable, never a secret value.

/** Depth on the head, or the node's `finalized` / `safe` block (optionally also `minDepth` deep): docs/chains.md. */
export type ConfirmationSetting = { kind: 'depth'; confirmations: number } | { kind: 'finalized' | 'safe'; minDepth?: number };
export type EvmFeeSetting = NonNullable<NetworkEntry['fees']>;

export interface ChainSettings {
  network: NetworkId;
  mode: Mode;
  family: ChainFamily;
  rpcUrl: string;
  /** Every endpoint, `rpcUrl` first (RPC_URL, then RPC_URLS in order, duplicates dropped). */
  rpcUrls: string[];
  /** Endpoints that must agree on the final block (RPC_QUORUM, default 1). */
  rpcQuorum: number;
  /** Blocks (slots) an endpoint may trail the best head before it leaves the rotation (RPC_MAX_LAG_BLOCKS). */
  rpcMaxLagBlocks: bigint;
  rpcTimeoutMs: number;
  chainId: bigint | undefined;
  confirmation: ConfirmationSetting;
  pollIntervalMs: number;
  maxBlockRange: number;
  startBlock: bigint | undefined;
  tokens: TokenSetting[];
  /** Explorer page template of a transaction (`{tx}`), shown on the paid page; null: no link (chains/explorers.ts). */
  explorerTxUrl: string | null;
  /** EVM: what a transaction costs there (L1 data fee, minimum tip), from the network registry. */
  fees: EvmFeeSetting | undefined;
  /**
   * Bridged copies of the settlement tokens: the registry's look-alikes and CHAIN_<NET>_<MODE>_LOOKALIKE_CONTRACTS
   * (src/watcher/lookalike-config.ts); recorded as unmatched deposits of an unsupported token, never credited.
   */
  lookalikes: LookalikeSetting[];
}

export interface WatcherSettings {
  chains: ChainSettings[];
  /** Closed sessions' addresses stay watched this long, so late transfers become unmatched deposits. */
  addressRetentionDays: number;
  /** How often a standby retries the leader lock. */
  standbyRetryMs: number;
}

const entryOf = (network: NetworkId): NetworkEntry => NETWORKS.find((n) => n.id === network)!;

/** The registry's finality policy as a setting. */
function defaultConfirmation(entry: NetworkEntry): ConfirmationSetting {
  const f = entry.watcher.finality;
  if (f.kind === 'depth') return { kind: 'depth', confirmations: f.confirmations };
  return f.minDepth === undefined ? { kind: f.tag } : { kind: f.tag, minDepth: f.minDepth };
}

/**
 * CHAIN_<NET>_<MODE>_CONFIRMATIONS: `<n>` (depth), `finalized`, `safe` (EVM only), or `finalized+<n>` / `safe+<n>` (the
 * tagged block and at least n deep). Empty: the registry's default.
 */
function confirmationSetting(env: Env, name: string, entry: NetworkEntry): ConfirmationSetting {
  const raw = env[name]?.trim();
  if (!raw) return defaultConfirmation(entry);
  const m = /^(finalized|safe)(?:\+(\d+))?$/.exec(raw);
  if (m) {
    if (m[1] === 'safe' && entry.family !== 'evm') throw new Error(`${name}: safe is an EVM block tag; use finalized or a depth`);
    if (m[2] !== undefined && entry.family !== 'evm') throw new Error(`${name}: a tag with a depth is for EVM networks`);
    const minDepth = m[2] === undefined ? undefined : Number(m[2]);
    if (minDepth !== undefined && minDepth < 1) throw new Error(`${name} must be an integer >= 1, finalized, safe, or tag+depth`);
    return minDepth === undefined ? { kind: m[1] as 'finalized' | 'safe' } : { kind: m[1] as 'finalized' | 'safe', minDepth };
  }
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error(`${name} must be an integer >= 1, finalized, safe, or tag+depth`);
  return { kind: 'depth', confirmations: Number(raw) };
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min = 1): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min) throw new Error(`${name} must be an integer >= ${min}`);
  return Number(raw);
}

function big(env: Env, name: string): bigint | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  if (!/^\d+$/.test(raw)) throw new Error(`${name} must be a non-negative integer`);
  return BigInt(raw);
}

export function loadChainSettings(env: Env, network: NetworkId, mode: Mode): ChainSettings | null {
  const p = chainEnvPrefix(network, mode);
  const single = env[`${p}RPC_URL`]?.trim();
  const listed = (env[`${p}RPC_URLS`] ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  if (single && !/^https?:\/\//.test(single)) throw new Error(`${p}RPC_URL must be an http(s) URL`);
  if (listed.some((u) => !/^https?:\/\//.test(u))) throw new Error(`${p}RPC_URLS must be comma-separated http(s) URLs`);
  const rpcUrls = [...new Set([...(single ? [single] : []), ...listed])];
  const rpcUrl = rpcUrls[0];
  if (!rpcUrl) return null;
  const rpcQuorum = int(env, `${p}RPC_QUORUM`, 1);
  if (rpcQuorum > rpcUrls.length) throw new Error(`${p}RPC_QUORUM must not exceed the number of RPC endpoints (${rpcUrls.length})`);
  const entry = entryOf(network);
  const d = entry.watcher;
  const confirmation = confirmationSetting(env, `${p}CONFIRMATIONS`, entry);
  const configured: TokenSetting[] = [];
  for (const symbol of TOKEN_SYMBOLS) {
    const address = env[`${p}${symbol}_CONTRACT`]?.trim();
    if (!address) continue;
    const decimals = env[`${p}${symbol}_DECIMALS`]?.trim();
    if (!decimals) throw new Error(`${p}${symbol}_DECIMALS is required with ${p}${symbol}_CONTRACT`);
    configured.push({ symbol, address, decimals: int(env, `${p}${symbol}_DECIMALS`, 0, 2) });
  }
  const tokens = resolveTokens(network, mode, configured);
  return {
    network,
    mode,
    family: entry.family,
    rpcUrl,
    rpcUrls,
    rpcQuorum,
    rpcMaxLagBlocks: BigInt(int(env, `${p}RPC_MAX_LAG_BLOCKS`, d.rpcMaxLagBlocks)),
    rpcTimeoutMs: int(env, `${p}RPC_TIMEOUT_MS`, d.rpcTimeoutMs),
    chainId: big(env, `${p}CHAIN_ID`),
    confirmation,
    pollIntervalMs: int(env, `${p}POLL_INTERVAL_MS`, d.pollIntervalMs),
    maxBlockRange: int(env, `${p}MAX_BLOCK_RANGE`, d.maxBlockRange),
    startBlock: big(env, `${p}START_BLOCK`),
    tokens,
    explorerTxUrl: explorerTxUrlSetting(
      `${p}EXPLORER_TX_URL`,
      env[`${p}EXPLORER_TX_URL`],
      defaultExplorerTxUrl(network, mode, big(env, `${p}CHAIN_ID`)),
    ),
    fees: 'fees' in entry ? entry.fees : undefined,
    lookalikes: lookalikeSettings(env, `${p}LOOKALIKE_CONTRACTS`, { network, mode, family: entry.family, tokens }),
  };
}

export function loadWatcherSettings(env: Env): WatcherSettings {
  const chains: ChainSettings[] = [];
  for (const network of NETWORK_IDS) {
    for (const mode of ['live', 'test'] as const) {
      const s = loadChainSettings(env, network, mode);
      if (s) chains.push(s);
    }
  }
  return {
    chains,
    addressRetentionDays: int(env, 'WATCHER_ADDRESS_RETENTION_DAYS', 30),
    standbyRetryMs: int(env, 'WATCHER_STANDBY_RETRY_MS', 1000),
  };
}
