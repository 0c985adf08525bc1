import type { OutgoingTransaction } from '../contract/sending.js';
import { RpcError } from '../evm/rpc-errors.js';
import { tronBase58 } from './address.js';

// A wallet's recent outgoing transactions on TRON (chains/contract/sending.ts OutgoingHistory), for the outbound
// engine's restore guard. java-tron's own HTTP API has no per-account history (only blocks and single transactions);
// TronGrid serves one beside it: `GET /v1/accounts/{address}/transactions` (TronGrid v1 API, "Get transaction info
// by account address"), with `only_from=true` (the account as owner_address: what it signed), `min_timestamp` (ms),
// `order_by=block_timestamp,desc`, `limit` (at most 200) and `fingerprint` (the next page, from `meta.fingerprint`).
// Every contract type is listed (TRC-20 calls, TRX transfers, Stake 2.0 delegations). The answer:
// { data: [{ txID, blockNumber, block_timestamp, ret: [{ contractRet }], raw_data, ... }], success, meta: { at,
// page_size, fingerprint? } }. A self-hosted java-tron needs a TronGrid-compatible host for it (HISTORY_HOST, docs/tron.md).

const PAGE = 200;
/**
 * The contract types the outbound engine sends from a TRON wallet (TRC-20 calls, TRX transfers, Stake 2.0 energy
 * delegations and their return): only those can be a send of ours the ledger lost. Anything else the wallet signed
 * (the operator staking TRX for energy, voting, a permission update) is the operator's own and holds nothing.
 */
const SENT_BY_THE_ENGINE = new Set(['TriggerSmartContract', 'TransferContract', 'DelegateResourceContract', 'UnDelegateResourceContract']);
/** Pages read at most (10 000 transactions) before the listing is reported truncated. */
const MAX_PAGES = 50;

interface AccountTransactionsReply {
  success?: boolean;
  error?: string;
  data?: Array<{
    txID?: string;
    block_timestamp?: number;
    ret?: Array<{ contractRet?: string }>;
    raw_data?: { contract?: Array<{ type?: string }> };
  }>;
  meta?: { fingerprint?: string };
}

export interface TronHistoryOptions {
  /** TronGrid (or a compatible indexer) base URL. */
  host: string;
  apiKey?: string;
  timeoutMs?: number;
}

export async function tronUnknownOutgoing(
  o: TronHistoryOptions,
  canonical: string,
  sinceMs: number,
  known: (hashes: string[]) => Promise<Set<string>>,
): Promise<{ found: OutgoingTransaction[]; truncated: boolean }> {
  const listed: OutgoingTransaction[] = [];
  let fingerprint: string | undefined;
  let truncated = true;
  for (let page = 0; page < MAX_PAGES; page++) {
    const q = new URLSearchParams({
      only_from: 'true',
      min_timestamp: String(Math.max(0, Math.floor(sinceMs))),
      order_by: 'block_timestamp,desc',
      limit: String(PAGE),
      ...(fingerprint ? { fingerprint } : {}),
    });
    const reply = await get(o, `/v1/accounts/${tronBase58(canonical)}/transactions?${q}`);
    for (const t of reply.data ?? []) {
      if (typeof t.txID !== 'string' || !/^[0-9a-fA-F]{64}$/.test(t.txID)) throw new RpcError('bad_response', 'transaction without a txID');
      const type = t.raw_data?.contract?.[0]?.type;
      // A type we never send is the operator's own; a transaction without one is counted (never assumed harmless).
      if (type !== undefined && !SENT_BY_THE_ENGINE.has(type)) continue;
      const ret = t.ret?.[0]?.contractRet;
      listed.push({
        hash: t.txID.toLowerCase(),
        timeMs: typeof t.block_timestamp === 'number' ? t.block_timestamp : null,
        failed: ret !== undefined && ret !== 'SUCCESS',
      });
    }
    fingerprint = reply.meta?.fingerprint;
    if (!fingerprint || (reply.data ?? []).length === 0) {
      truncated = false;
      break;
    }
  }
  const knownSet = listed.length > 0 ? await known(listed.map((t) => t.hash)) : new Set<string>();
  return { found: listed.filter((t) => !knownSet.has(t.hash)), truncated };
}

async function get(o: TronHistoryOptions, path: string): Promise<AccountTransactionsReply> {
  let res: Response;
  try {
    res = await fetch(`${o.host}${path}`, {
      headers: { accept: 'application/json', ...(o.apiKey ? { 'TRON-PRO-API-KEY': o.apiKey } : {}) },
      signal: AbortSignal.timeout(o.timeoutMs ?? 15_000),
    });
  } catch (e) {
    const name = (e as Error).name;
    throw new RpcError(name === 'TimeoutError' ? 'timeout' : 'unavailable', `account transactions: ${(e as Error).message}`);
  }
  if (res.status === 429) throw new RpcError('rate_limited', 'account transactions: HTTP 429', 429);
  if (!res.ok) throw new RpcError(res.status >= 500 ? 'unavailable' : 'rpc_error', `account transactions: HTTP ${res.status}`, res.status);
  const body = (await res.json()) as AccountTransactionsReply;
  if (body.success === false) throw new RpcError('rpc_error', `account transactions: ${body.error ?? 'refused'}`);
  return body;
}
