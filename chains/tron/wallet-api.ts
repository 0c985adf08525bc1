import { TronWeb, providers } from 'tronweb';
import { RpcError } from '../evm/rpc-errors.js';

// java-tron's HTTP wallet API through tronweb's providers (which carry the TRON-PRO-API-KEY header). Shapes follow
// the TRON developer documentation; protobuf JSON omits zero and empty fields, so every numeric field is optional.
// Int64 values arrive as JSON numbers (or strings from nodes honouring int64_as_string): `int64()` turns either into
// a bigint and refuses a number that lost precision, so no amount ever passes through an unsafe JS number.

export interface WalletApiOptions {
  /** Full node HTTP API, e.g. https://api.trongrid.io or http://127.0.0.1:8090. */
  fullHost: string;
  /** Solidity API host (`/walletsolidity/*`); default fullHost (TronGrid serves both; java-tron uses port 8091). */
  solidityHost?: string;
  /** TronGrid API key, sent as TRON-PRO-API-KEY. Secret. */
  apiKey?: string;
  timeoutMs?: number;
}

export type Int64 = number | string;

export interface TransactionJson {
  txID: string;
  raw_data: {
    expiration: number;
    timestamp?: number;
    fee_limit?: number;
    ref_block_bytes: string;
    ref_block_hash: string;
    contract: unknown[];
  };
  raw_data_hex: string;
  visible?: boolean;
  signature?: string[];
  ret?: Array<{ contractRet?: string; ret?: string }>;
}

export interface TriggerReply {
  result?: { result?: boolean; code?: string; message?: string };
  energy_used?: Int64;
  energy_penalty?: Int64;
  constant_result?: string[];
  transaction?: TransactionJson;
  Error?: string;
}

export interface TransactionInfo {
  id?: string;
  fee?: Int64;
  blockNumber?: Int64;
  blockTimeStamp?: Int64;
  contractResult?: string[];
  contract_address?: string;
  receipt?: {
    energy_usage?: Int64;
    energy_fee?: Int64;
    origin_energy_usage?: Int64;
    energy_usage_total?: Int64;
    net_usage?: Int64;
    net_fee?: Int64;
    result?: string;
    energy_penalty_total?: Int64;
  };
  log?: Array<{ address: string; topics?: string[]; data?: string }>;
  result?: string;
  resMessage?: string;
}

export interface BroadcastReply {
  result?: boolean;
  txid?: string;
  code?: string;
  message?: string;
}

export interface BlockJson {
  blockID?: string;
  block_header?: { raw_data?: { number?: Int64; timestamp?: Int64; parentHash?: string } };
}

export interface AccountJson {
  address?: string;
  balance?: Int64;
  create_time?: Int64;
}

export interface AccountResourceJson {
  freeNetUsed?: Int64;
  freeNetLimit?: Int64;
  NetUsed?: Int64;
  NetLimit?: Int64;
  EnergyUsed?: Int64;
  EnergyLimit?: Int64;
  /** Network totals (Stake 2.0): energy a day for everyone, and whole TRX staked for energy. */
  TotalEnergyLimit?: Int64;
  TotalEnergyWeight?: Int64;
}

export function int64(v: Int64 | undefined | null): bigint {
  if (v === undefined || v === null) return 0n;
  if (typeof v === 'string') {
    if (!/^-?\d+$/.test(v)) throw new RpcError('bad_response', `not an integer: ${v}`);
    return BigInt(v);
  }
  if (!Number.isSafeInteger(v)) throw new RpcError('bad_response', `integer beyond 2^53 received as a JSON number: ${v}`);
  return BigInt(v);
}

/** java-tron hex-encodes `message` fields when visible=false. Falls back to the text itself. */
export function decodeNodeMessage(message: string | undefined): string {
  if (!message) return '';
  if (/^([0-9a-fA-F]{2})+$/.test(message)) {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(message, 'hex'));
    } catch {
      return message;
    }
  }
  return message;
}

export class TronWalletApi {
  readonly tronWeb: TronWeb;

  constructor(o: WalletApiOptions) {
    const headers: Record<string, string> = o.apiKey ? { 'TRON-PRO-API-KEY': o.apiKey } : {};
    const timeout = o.timeoutMs ?? 15_000;
    const full = new providers.HttpProvider(o.fullHost, timeout, '', '', headers);
    const solidity = new providers.HttpProvider(o.solidityHost ?? o.fullHost, timeout, '', '', headers);
    this.tronWeb = new TronWeb(full, solidity, full);
  }

  /** POST to the full node (`wallet/...`); transport failures become transient RpcErrors. */
  full<T>(path: string, body: Record<string, unknown>): Promise<T> {
    return this.#request<T>('fullNode', path, body);
  }

  /** POST to the solidity API (`walletsolidity/...`): answers reflect solidified blocks only. */
  solidity<T>(path: string, body: Record<string, unknown>): Promise<T> {
    return this.#request<T>('solidityNode', path, body);
  }

  async #request<T>(node: 'fullNode' | 'solidityNode', path: string, body: Record<string, unknown>): Promise<T> {
    try {
      return await this.tronWeb[node].request<T>(path, body, 'post');
    } catch (e) {
      const status = (e as { response?: { status?: number } }).response?.status;
      if (status === 429) throw new RpcError('rate_limited', `${path}: HTTP 429`, 429);
      if (status !== undefined && status < 500 && status !== 408) throw new RpcError('rpc_error', `${path}: HTTP ${status}`, status);
      const code = (e as { code?: string }).code;
      if (code === 'ECONNABORTED' || code === 'ETIMEDOUT') throw new RpcError('timeout', `${path} timed out`);
      throw new RpcError('unavailable', `${path}: ${status ? `HTTP ${status}` : (e as Error).message}`, status ?? null);
    }
  }
}
