import { chainEnvPrefix } from '../env-names.js';
import { soleNetworkOfFamily } from '../registry.js';
import type { Mode, NetworkId } from '../types.js';

// Solana-only settings, read beside the shared CHAIN_<NETWORK>_<MODE>_* ones (CHAIN_SOLANA_<MODE>_*) of src/watcher/config.ts (names and
// defaults in docs/solana.md). Unset or empty variables leave the adapter's defaults; errors name the variable.

export interface SolanaExtraSettings {
  rescanSlots?: number;
  referenceScanEveryPolls?: number;
  rpcConcurrency?: number;
  computeUnitLimit?: number;
  minComputeUnitPrice?: bigint;
  maxComputeUnitPrice?: bigint;
}

type Env = Record<string, string | undefined>;

export function loadSolanaExtraSettings(env: Env, mode: Mode, network: NetworkId = soleNetworkOfFamily('solana')): SolanaExtraSettings {
  const p = chainEnvPrefix(network, mode);
  const raw = (name: string): string | undefined => {
    const v = env[`${p}${name}`]?.trim();
    if (!v) return undefined;
    if (!/^\d{1,18}$/.test(v)) throw new Error(`${p}${name} must be a non-negative integer`);
    return v;
  };
  const int = (name: string, min: number, max: number): number | undefined => {
    const v = raw(name);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (n < min || n > max) throw new Error(`${p}${name} must be an integer ${min}..${max}`);
    return n;
  };
  const big = (name: string): bigint | undefined => {
    const v = raw(name);
    return v === undefined ? undefined : BigInt(v);
  };
  const s: SolanaExtraSettings = {
    rescanSlots: int('RESCAN_SLOTS', 0, 100_000),
    referenceScanEveryPolls: int('REFERENCE_SCAN_EVERY_POLLS', 0, 1_000_000),
    rpcConcurrency: int('RPC_CONCURRENCY', 1, 256),
    computeUnitLimit: int('COMPUTE_UNIT_LIMIT', 1, 1_400_000),
    minComputeUnitPrice: big('MIN_CU_PRICE'),
    maxComputeUnitPrice: big('MAX_CU_PRICE'),
  };
  if (s.minComputeUnitPrice !== undefined && s.maxComputeUnitPrice !== undefined && s.minComputeUnitPrice > s.maxComputeUnitPrice) {
    throw new Error(`${p}MIN_CU_PRICE must not exceed ${p}MAX_CU_PRICE`);
  }
  return Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined)) as SolanaExtraSettings;
}
