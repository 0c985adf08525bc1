import { chainEnvPrefix } from '../env-names.js';
import { soleNetworkOfFamily } from '../registry.js';
import type { Mode, NetworkId } from '../types.js';

// TRON-only settings, read beside the shared CHAIN_<NETWORK>_<MODE>_* ones (CHAIN_TRON_<MODE>_*) of src/watcher/config.ts (RPC_URL is the
// JSON-RPC endpoint used for detection; CONFIRMATIONS, START_BLOCK, ... as for every chain). Names in docs/tron.md.
// Errors name the variable, never a value (the API key is a secret).

export interface TronExtraSettings {
  /** HTTP wallet API (sending, receipts, resources). */
  fullHost: string | undefined;
  solidityHost: string | undefined;
  apiKey: string | undefined;
  /** TronGrid-compatible account history for the restore guard (`/v1/accounts/{address}/transactions`); default fullHost. */
  historyHost: string | undefined;
  feeLimitCeilingSun: bigint;
  energyMarginPercent: number;
}

type Env = Record<string, string | undefined>;

export const DEFAULT_FEE_LIMIT_CEILING_SUN = 50_000_000n; // 50 TRX: a first-receipt USDT transfer burns ~13 TRX at 100 sun/energy
export const DEFAULT_ENERGY_MARGIN_PERCENT = 20;

export function loadTronExtraSettings(
  env: Env,
  mode: Mode,
  rpcUrl?: string,
  network: NetworkId = soleNetworkOfFamily('tron'),
): TronExtraSettings {
  const p = chainEnvPrefix(network, mode);
  const url = (name: string): string | undefined => {
    const v = env[`${p}${name}`]?.trim();
    if (!v) return undefined;
    if (!/^https?:\/\//.test(v)) throw new Error(`${p}${name} must be an http(s) URL`);
    return v.replace(/\/+$/, '');
  };
  // TronGrid serves JSON-RPC at <host>/jsonrpc and the wallet API at <host>: derive the one from the other.
  const fullHost = url('FULL_HOST') ?? (rpcUrl && /\/jsonrpc\/?$/.test(rpcUrl) ? rpcUrl.replace(/\/jsonrpc\/?$/, '') : undefined);
  const ceiling = env[`${p}FEE_LIMIT_CEILING_SUN`]?.trim();
  if (ceiling !== undefined && ceiling !== '' && !/^\d+$/.test(ceiling))
    throw new Error(`${p}FEE_LIMIT_CEILING_SUN must be an integer (sun)`);
  const margin = env[`${p}ENERGY_MARGIN_PERCENT`]?.trim();
  if (margin !== undefined && margin !== '' && (!/^\d+$/.test(margin) || Number(margin) > 500))
    throw new Error(`${p}ENERGY_MARGIN_PERCENT must be an integer in 0..500`);
  return {
    fullHost,
    solidityHost: url('SOLIDITY_HOST'),
    apiKey: env[`${p}API_KEY`]?.trim() || undefined,
    historyHost: url('HISTORY_HOST'),
    feeLimitCeilingSun: ceiling ? BigInt(ceiling) : DEFAULT_FEE_LIMIT_CEILING_SUN,
    energyMarginPercent: margin ? Number(margin) : DEFAULT_ENERGY_MARGIN_PERCENT,
  };
}
