import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { id } from 'ethers';
import { normalizeTronAddress } from '../../../chains/tron/address.js';
import { decodeSignedTransaction, txIdOf } from '../../../chains/tron/protobuf.js';
import type { SystemContractValue } from '../../../chains/tron/system-contracts.js';
import { FREE_NET_LIMIT, FakeTronChain, type ForcedResult, type Rpc, type StoredTx } from './chain.js';
import { BroadcastRefusal } from './refusal.js';
import { validateSystemContract } from './system.js';

// THIS IS A FAKE of java-tron's HTTP wallet API, for tests and the local demo only: no TRON node can be installed here (docs/testing.md).
// It serves the endpoints tronweb and chains/tron call (payouts, charges, sweeps with Stake 2.0 energy delegation), with the JSON shapes of the TRON developer documentation
// (protobuf JSON: zero fields omitted, hex addresses `41...` with visible=false, `message` fields hex-encoded), over
// an Anvil node that holds the token contracts and mines the blocks. Rules and limits: chain.ts.
// Beside java-tron's own API it serves TronGrid's `GET /v1/accounts/{address}/transactions` (the account history the
// restore guard reads: java-tron has none), with the filters and paging the gateway uses.
// Endpoints outside the list answer 404 and are recorded in `unhandled`, so a test can assert none was needed.

export interface FakeJavaTron {
  url: string;
  chain: FakeTronChain;
  /** Paths requested, in order. */
  calls: string[];
  unhandled: string[];
  /** The next broadcast transaction's receipt is this failure (queue). */
  forceNextResult(r: ForcedResult): void;
  /** Until cleared (`null`), every broadcast is refused as java-tron refuses a sender without bandwidth: `code`
   * BANDWITH_ERROR, "Account resource insufficient error." (the documented reply of /wallet/broadcasthex). Counted in
   * `refused`. */
  refuseBroadcasts(on: boolean): void;
  /** Broadcasts refused by `refuseBroadcasts`. */
  readonly refused: number;
  close(): Promise<void>;
}

const hexUtf8 = (s: string) => Buffer.from(s, 'utf8').toString('hex');

export async function startFakeJavaTron(
  anvil: { rpc: Rpc; url?: string },
  o: { solidifyDepth?: number; port?: number } = {},
): Promise<FakeJavaTron> {
  const chain = new FakeTronChain(anvil.rpc, o.solidifyDepth ?? 19);
  const calls: string[] = [];
  const unhandled: string[] = [];

  const routes: Record<string, (b: Record<string, unknown>) => Promise<unknown>> = {
    'wallet/getnowblock': async () => blockJson(await chain.head()),
    'walletsolidity/getnowblock': async () => blockJson((await chain.block(await chain.solidHeight()))!),
    'wallet/getblockbynum': async (b) => blockOrEmpty(await chain.block(BigInt(Number(b.num)))),
    'walletsolidity/getblockbynum': async (b) => {
      const n = BigInt(Number(b.num));
      return n <= (await chain.solidHeight()) ? blockOrEmpty(await chain.block(n)) : {};
    },
    'wallet/getblock': async (b) =>
      b.id_or_num === undefined ? blockJson(await chain.head()) : blockOrEmpty(await chain.block(BigInt(String(b.id_or_num)))),
    'wallet/getchainparameters': async () => ({
      chainParameter: [
        { key: 'getMaintenanceTimeInterval', value: 21600000 },
        { key: 'getAccountUpgradeCost', value: 9999000000 },
        { key: 'getCreateAccountFee', value: Number(chain.createAccountFeeSun) },
        { key: 'getCreateNewAccountFeeInSystemContract', value: Number(chain.createNewAccountFeeSun) },
        { key: 'getTransactionFee', value: Number(chain.bandwidthPriceSun) },
        { key: 'getFreeNetLimit', value: Number(FREE_NET_LIMIT) },
        { key: 'getEnergyFee', value: Number(chain.energyPriceSun) },
        { key: 'getMaxFeeLimit', value: 15000000000 },
      ],
    }),
    // `block` and `solidityBlock` as java-tron writes them: "Num:<height>,ID:<block id>".
    'wallet/getnodeinfo': async () => {
      const head = await chain.head();
      const solid = (await chain.block(await chain.solidHeight()))!;
      return {
        configNodeInfo: { codeVersion: '4.8.0' },
        block: `Num:${head.number},ID:${head.blockId}`,
        solidityBlock: `Num:${solid.number},ID:${solid.blockId}`,
      };
    },
    'wallet/getaccount': async (b) => accountJson(chain, b),
    // The solidity node's account: its TRX balance in the solidified block's state (resources are the latest).
    'walletsolidity/getaccount': async (b) => {
      const address = normalizeTronAddress(String(b.address ?? ''));
      const sun = address ? chain.trxAt(address, await chain.solidHeight()) : undefined;
      if (sun === undefined) return {};
      const { balance: _latest, ...rest } = accountJson(chain, b) as { balance?: number };
      return { ...rest, ...(sun > 0n ? { balance: Number(sun) } : {}) };
    },
    'wallet/getaccountresource': async (b) => resourceJson(chain, b),
    'wallet/triggersmartcontract': async (b) => {
      const p = triggerParams(b);
      if ('error' in p) return p.error;
      const code = await chain.rpc<string>('eth_getCode', [`0x${p.contract.slice(2)}`, 'latest']);
      if (code === '0x')
        return { result: { code: 'CONTRACT_VALIDATE_ERROR', message: hexUtf8('No contract or not a valid smart contract') } };
      const transaction = await chain.buildTrigger({
        ...p,
        feeLimit: BigInt(Number(b.fee_limit ?? 0)),
        callValue: BigInt(Number(b.call_value ?? 0)),
      });
      return { result: { result: true }, transaction };
    },
    'wallet/triggerconstantcontract': async (b) => {
      const p = triggerParams(b);
      if ('error' in p) return p.error;
      const code = await chain.rpc<string>('eth_getCode', [`0x${p.contract.slice(2)}`, 'latest']);
      if (code === '0x') return { result: { code: 'CONTRACT_VALIDATE_ERROR', message: hexUtf8('Smart contract is not exist.') } };
      const sim = await chain.simulate(p.owner, p.contract, p.data);
      const transaction = await chain.buildTrigger({ ...p, feeLimit: 0n, callValue: 0n });
      if (!sim.ok) {
        return {
          result: { result: true, message: hexUtf8('REVERT opcode executed') },
          energy_used: 2000,
          constant_result: [sim.result],
          transaction: { ret: [{ ret: 'FAILED' }], ...transaction },
        };
      }
      return {
        result: { result: true },
        energy_used: Number(sim.energy),
        constant_result: [sim.result],
        transaction: { ret: [{}], ...transaction },
      };
    },
    // The solidity node's constant call (java-tron 4.x): the same answer as the full node's, on solidified state.
    'walletsolidity/triggerconstantcontract': async (b) => {
      const p = triggerParams(b);
      if ('error' in p) return p.error;
      const sim = await chain.simulate(p.owner, p.contract, p.data, await chain.solidHeight());
      if (!sim.ok)
        return {
          result: { result: true, message: hexUtf8('REVERT opcode executed') },
          energy_used: 2000,
          constant_result: [sim.result],
          transaction: { ret: [{ ret: 'FAILED' }] },
        };
      return { result: { result: true }, energy_used: Number(sim.energy), constant_result: [sim.result], transaction: { ret: [{}] } };
    },
    // Builders of system contracts (Stake 2.0 and TRX transfers): the unsigned transaction, or java-tron's
    // {"Error": "class ...ContractValidateException : ..."} when the actuator's validation refuses it.
    'wallet/createtransaction': async (b) =>
      buildSystem(chain, b, (owner) => ({ name: 'TransferContract', owner, to: tronAddr(b.to_address), amount: int(b.amount) })),
    'wallet/freezebalancev2': async (b) =>
      buildSystem(chain, b, (owner) => ({
        name: 'FreezeBalanceV2Contract',
        owner,
        to: '',
        amount: int(b.frozen_balance),
        resource: res(b.resource),
      })),
    'wallet/delegateresource': async (b) =>
      buildSystem(chain, b, (owner) => ({
        name: 'DelegateResourceContract',
        owner,
        to: tronAddr(b.receiver_address),
        amount: int(b.balance),
        resource: res(b.resource),
        lock: b.lock === true,
        lockPeriod: int(b.lock_period),
      })),
    'wallet/undelegateresource': async (b) =>
      buildSystem(chain, b, (owner) => ({
        name: 'UnDelegateResourceContract',
        owner,
        to: tronAddr(b.receiver_address),
        amount: int(b.balance),
        resource: res(b.resource),
      })),
    // Stake 2.0: how much frozen TRX (sun) of one resource the account can still delegate; type 0 bandwidth, 1 energy.
    'wallet/getcandelegatedmaxsize': async (b) => {
      const a = chain.account(tronAddr(b.owner_address));
      const max = a ? chain.resources.canDelegateMax(a, Number(b.type ?? 0) === 1 ? 'ENERGY' : 'BANDWIDTH') : 0n;
      return max > 0n ? { max_size: Number(max) } : {};
    },
    // Energy a call needs (java-tron with vm.estimateEnergy = true); errors in result, never {"Error"}; result.result
    // false is the proto default and is not printed.
    'wallet/estimateenergy': async (b) => {
      if (!chain.estimateEnergyEnabled)
        return { result: { code: 'CONTRACT_VALIDATE_ERROR', message: hexUtf8('this node does not support estimate energy') } };
      const p = triggerParams(b);
      if ('error' in p) return p.error;
      const code = await chain.rpc<string>('eth_getCode', [`0x${p.contract.slice(2)}`, 'latest']);
      if (code === '0x') return { result: { code: 'CONTRACT_VALIDATE_ERROR', message: hexUtf8('Smart contract is not exist.') } };
      const sim = await chain.simulate(p.owner, p.contract, p.data);
      // Wallet.estimateEnergy: a failing constant call is returned at once with CONTRACT_EXE_ERROR.
      if (!sim.ok) return { result: { code: 'CONTRACT_EXE_ERROR', message: hexUtf8('REVERT opcode executed') } };
      return { result: { result: true }, energy_required: Number(sim.energy) };
    },
    'wallet/broadcasttransaction': async (b) => {
      const raw = String(b.raw_data_hex ?? '');
      const sigs = Array.isArray(b.signature) ? (b.signature as string[]) : [];
      return broadcastReply(chain, raw, sigs, raw.length / 2 + sigs.length * 67 + 2, false);
    },
    'wallet/broadcasthex': async (b) => {
      let decoded: { rawDataHex: string; signatures: string[] };
      try {
        decoded = decodeSignedTransaction(String(b.transaction ?? ''));
      } catch (e) {
        return { result: false, code: 'OTHER_ERROR', message: hexUtf8(`cannot parse transaction: ${(e as Error).message}`) };
      }
      return broadcastReply(chain, decoded.rawDataHex, decoded.signatures, String(b.transaction).length / 2, true);
    },
    'wallet/gettransactionbyid': async (b) => {
      const t = chain.txs.get(String(b.value ?? '').toLowerCase());
      return t ? chain.txJson(t) : {};
    },
    'walletsolidity/gettransactionbyid': async (b) => {
      const t = chain.txs.get(String(b.value ?? '').toLowerCase());
      return t && t.blockNumber <= (await chain.solidHeight()) ? chain.txJson(t) : {};
    },
    'wallet/gettransactioninfobyid': async (b) => chain.txs.get(String(b.value ?? '').toLowerCase())?.info ?? {},
    'walletsolidity/gettransactioninfobyid': async (b) => {
      const t = chain.txs.get(String(b.value ?? '').toLowerCase());
      return t && t.blockNumber <= (await chain.solidHeight()) ? t.info : {};
    },
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const path = url.pathname.replace(/^\/+/, '');
      calls.push(path);
      if (path === 'jsonrpc' && anvil.url) {
        // java-tron's Ethereum-compatible JSON-RPC, served from Anvil with transaction hashes as TRON txIDs.
        jsonRpcProxy(anvil.url, chain, Buffer.concat(chunks).toString('utf8')).then(
          (out) => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(out);
          },
          (e: unknown) => {
            res.writeHead(502, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: (e as Error).message } }));
          },
        );
        return;
      }
      const route = routes[path];
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const history = /^v1\/accounts\/([^/]+)\/transactions$/.exec(path);
      if (history && req.method === 'GET') return send(200, accountTransactions(chain, history[1]!, url.searchParams));
      if (!route) {
        unhandled.push(path);
        return send(404, { Error: `fake java-tron does not serve ${path}` });
      }
      let body: Record<string, unknown> = Object.fromEntries(url.searchParams.entries());
      const text = Buffer.concat(chunks).toString('utf8');
      if (text) {
        try {
          body = { ...body, ...(JSON.parse(text) as Record<string, unknown>) };
        } catch {
          return send(200, { Error: 'INVALID_JSON' });
        }
      }
      route(body).then(
        (out) => send(200, out),
        (e: unknown) => send(200, { Error: `class java.lang.Exception : ${(e as Error).message}` }),
      );
    });
  });
  // Longer than any client's free-socket timeout, as TronGrid's load balancer keeps idle connections (see the Solana
  // endpoint's rpc-server.ts): no client writes to a socket this server already closed.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve) => server.listen(o.port ?? 0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    chain,
    calls,
    unhandled,
    forceNextResult: (r) => chain.forced.push(r),
    refuseBroadcasts(on) {
      chain.refuseAll = on;
    },
    get refused() {
      return chain.refusedCount;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function triggerParams(b: Record<string, unknown>): { owner: string; contract: string; data: string } | { error: unknown } {
  const owner = normalizeTronAddress(String(b.owner_address ?? ''));
  const contract = normalizeTronAddress(String(b.contract_address ?? ''));
  if (!owner || !contract) return { error: { result: { code: 'OTHER_ERROR', message: hexUtf8('Invalid address') } } };
  let data = typeof b.data === 'string' ? b.data.replace(/^0x/, '') : '';
  if (typeof b.function_selector === 'string' && b.function_selector) {
    data = id(b.function_selector.replace(/\s/g, '')).slice(2, 10) + String(b.parameter ?? '').replace(/^0x/, '');
  }
  return { owner, contract, data: data.toLowerCase() };
}

/**
 * java-tron's two broadcast servlets print the same GrpcAPI.Return differently. BroadcastServlet (`broadcasttransaction`):
 * protobuf JSON with visible=false, so `result: false` and `code: SUCCESS` (defaults) are left out and `message` is
 * hex-encoded UTF-8. BroadcastHexServlet (`broadcasthex`): every field always, `message` as plain UTF-8 text, and the
 * transaction as a JSON text. Both name the transaction's txid, refused or not. Messages are Wallet.broadcastTransaction's.
 */
async function broadcastReply(chain: FakeTronChain, rawDataHex: string, signatures: string[], size: number, hex: boolean) {
  const txid = txIdOf(rawDataHex.toLowerCase());
  const refusal = (code: string, text: string) =>
    hex
      ? {
          result: false,
          code,
          message: text,
          transaction: JSON.stringify({ signature: signatures, txID: txid, raw_data_hex: rawDataHex }),
          txid,
        }
      : { code, message: hexUtf8(text), txid };
  if (chain.refuseAll) {
    chain.refusedCount++;
    return refusal('BANDWITH_ERROR', BROADCAST_MESSAGES.BANDWITH_ERROR!);
  }
  try {
    const t = await chain.broadcast(rawDataHex.toLowerCase(), signatures, size);
    return hex
      ? { result: true, code: 'SUCCESS', message: '', transaction: JSON.stringify(chain.txJson(t)), txid: t.txId }
      : { result: true, code: 'SUCCESS', txid: t.txId };
  } catch (e) {
    if (!(e instanceof BroadcastRefusal)) throw e;
    return refusal(e.code, broadcastMessage(e));
  }
}

/** Wallet.broadcastTransaction's message for each refusal code (java-tron 4.8); the others carry the cause's text. */
const BROADCAST_MESSAGES: Partial<Record<string, string>> = {
  BANDWITH_ERROR: 'Account resource insufficient error.',
  DUP_TRANSACTION_ERROR: 'Dup transaction.',
  TAPOS_ERROR: 'Tapos check error.',
  TRANSACTION_EXPIRATION_ERROR: 'Transaction expired',
};

function broadcastMessage(e: BroadcastRefusal): string {
  const fixed = BROADCAST_MESSAGES[e.code];
  if (fixed) return fixed;
  if (e.code === 'CONTRACT_VALIDATE_ERROR') return `Contract validate error : ${e.message}`;
  if (e.code === 'OTHER_ERROR') return `Error: ${e.message}`;
  return e.message;
}

function blockJson(b: { number: bigint; timeMs: bigint; blockId: string; parentId: string }) {
  return {
    blockID: b.blockId,
    block_header: {
      raw_data: {
        number: Number(b.number),
        txTrieRoot: '0'.repeat(64),
        witness_address: '41' + '0'.repeat(40),
        parentHash: b.parentId,
        version: 31,
        timestamp: Number(b.timeMs),
      },
      // A witness signs every block: 65 bytes, hex. Here a stand-in derived from the block id (nothing checks it).
      witness_signature: standInSignature(b.blockId),
    },
  };
}

function standInSignature(blockId: string): string {
  const h = (x: string) => createHash('sha256').update(x).digest('hex');
  return `${h(blockId)}${h(h(blockId))}00`;
}

function blockOrEmpty(b: Parameters<typeof blockJson>[0] | null) {
  return b ? blockJson(b) : {};
}

const tronAddr = (v: unknown): string => normalizeTronAddress(String(v ?? '')) ?? '';
const int = (v: unknown): bigint => (typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v)) ? BigInt(v) : 0n);
const res = (v: unknown): 'ENERGY' | 'BANDWIDTH' => (v === 'ENERGY' || v === 1 ? 'ENERGY' : 'BANDWIDTH');

async function buildSystem(
  chain: FakeTronChain,
  b: Record<string, unknown>,
  make: (owner: string) => Omit<SystemContractValue, 'resource' | 'lock' | 'lockPeriod'> & Partial<SystemContractValue>,
) {
  const owner = tronAddr(b.owner_address);
  const m = make(owner);
  const v: SystemContractValue = { resource: 'BANDWIDTH', lock: false, lockPeriod: 0n, ...m };
  if (!owner || (v.name !== 'FreezeBalanceV2Contract' && !v.to))
    return { Error: 'class java.lang.IllegalArgumentException : Invalid address' };
  try {
    validateSystemContract(chain, v);
  } catch (e) {
    if (e instanceof BroadcastRefusal) return { Error: `class org.tron.core.exception.ContractValidateException : ${e.message}` };
    throw e;
  }
  return chain.buildSystem(v);
}

/** getaccount: protobuf JSON of the Account, Stake 2.0 fields included when non-zero. */
function accountJson(chain: FakeTronChain, b: Record<string, unknown>) {
  const address = normalizeTronAddress(String(b.address ?? ''));
  const a = address ? chain.account(address) : undefined;
  if (!address || !a) return {};
  const out: Record<string, unknown> = {
    address,
    ...(a.balanceSun > 0n ? { balance: Number(a.balanceSun) } : {}),
    create_time: a.createTime,
  };
  if (a.freeNetUsed > 0n) out.free_net_usage = Number(a.freeNetUsed);
  if (a.netUsed > 0n) out.net_usage = Number(a.netUsed);
  const frozen = [
    { ...(a.frozenBandwidthSun > 0n ? { amount: Number(a.frozenBandwidthSun) } : {}) },
    { type: 'ENERGY', ...(a.frozenEnergySun > 0n ? { amount: Number(a.frozenEnergySun) } : {}) },
    { type: 'TRON_POWER' },
  ];
  if (a.frozenBandwidthSun + a.frozenEnergySun > 0n) out.frozenV2 = frozen;
  if (a.delegatedBandwidthSun > 0n) out.delegated_frozenV2_balance_for_bandwidth = Number(a.delegatedBandwidthSun);
  if (a.acquiredBandwidthSun > 0n) out.acquired_delegated_frozenV2_balance_for_bandwidth = Number(a.acquiredBandwidthSun);
  const r: Record<string, number> = {};
  if (a.energyUsed > 0n) r.energy_usage = Number(a.energyUsed);
  if (a.delegatedEnergySun > 0n) r.delegated_frozenV2_balance_for_energy = Number(a.delegatedEnergySun);
  if (a.acquiredEnergySun > 0n) r.acquired_delegated_frozenV2_balance_for_energy = Number(a.acquiredEnergySun);
  if (Object.keys(r).length) out.account_resource = r;
  return out;
}

function resourceJson(chain: FakeTronChain, b: Record<string, unknown>) {
  const address = normalizeTronAddress(String(b.address ?? ''));
  const a = address ? chain.account(address) : undefined;
  // A missing or unknown address answers {}, as java-tron documents it.
  if (!a) return {};
  const book = chain.resources;
  const out: Record<string, number> = {
    freeNetLimit: Number(FREE_NET_LIMIT),
    TotalNetLimit: Number(book.totalNetLimit),
    TotalNetWeight: Number(book.netWeight()),
    TotalEnergyLimit: Number(book.totalEnergyLimit),
    TotalEnergyWeight: Number(book.energyWeight()),
  };
  const put = (k: string, v: bigint) => {
    if (v > 0n) out[k] = Number(v);
  };
  put('freeNetUsed', a.freeNetUsed);
  put('NetUsed', a.netUsed);
  put('NetLimit', book.netLimit(a));
  put('EnergyUsed', a.energyUsed);
  put('EnergyLimit', book.energyLimit(a));
  put('tronPowerLimit', (a.frozenBandwidthSun + a.frozenEnergySun) / 1_000_000n);
  return out;
}

/** Forwards a JSON-RPC request (single or batch) to Anvil, mapping TRON txIDs to Anvil hashes in, and back out. */
async function jsonRpcProxy(anvilUrl: string, chain: FakeTronChain, body: string): Promise<string> {
  const swap = (v: unknown, map: Map<string, string>): unknown => {
    if (typeof v === 'string') return map.get(v.toLowerCase()) ?? v;
    if (Array.isArray(v)) return v.map((x) => swap(x, map));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, swap(x, map)]));
    return v;
  };
  const request = swap(JSON.parse(body), chain.tronToEvmHash);
  const res = await fetch(anvilUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
  return JSON.stringify(swap(await res.json(), chain.evmToTronHash));
}

/**
 * TronGrid v1 "Get transaction info by account address": the account's transactions, newest first (`order_by`
 * block_timestamp,desc, the only order served here), filtered by `only_from` (the account is the owner) / `only_to`,
 * `min_timestamp` / `max_timestamp` (ms, block time), at most `limit` (1..200, default 20) a page; `meta.fingerprint`
 * names the next page while there is one. Items carry txID, blockNumber, block_timestamp, ret, raw_data as TronGrid
 * prints them. An address that is not a TRON address answers TronGrid's error shape.
 */
function accountTransactions(chain: FakeTronChain, addressText: string, q: URLSearchParams) {
  const address = normalizeTronAddress(decodeURIComponent(addressText));
  if (!address) return { success: false, error: `Invalid address provided: ${addressText}`, statusCode: 400 };
  const limit = Math.min(200, Math.max(1, Number(q.get('limit') ?? 20) || 20));
  const min = q.get('min_timestamp') ? BigInt(q.get('min_timestamp')!) : null;
  const max = q.get('max_timestamp') ? BigInt(q.get('max_timestamp')!) : null;
  const onlyFrom = q.get('only_from') === 'true';
  const onlyTo = q.get('only_to') === 'true';
  const ownerOf = (t: StoredTx) => (t.raw ? t.raw.owner : (t.system?.owner ?? ''));
  const toOf = (t: StoredTx) => (t.raw ? t.raw.contract : (t.system?.to ?? ''));
  const all = [...chain.txs.values()]
    .filter((t) => (onlyFrom ? ownerOf(t) === address : onlyTo ? toOf(t) === address : ownerOf(t) === address || toOf(t) === address))
    .filter((t) => (min === null || t.blockTimeMs >= min) && (max === null || t.blockTimeMs <= max))
    .sort((a, b) => (a.blockTimeMs === b.blockTimeMs ? Number(b.blockNumber - a.blockNumber) : Number(b.blockTimeMs - a.blockTimeMs)));
  const offset = q.get('fingerprint') ? Number(Buffer.from(q.get('fingerprint')!, 'base64url').toString('utf8')) || 0 : 0;
  const page = all.slice(offset, offset + limit);
  const next = offset + limit < all.length ? Buffer.from(String(offset + limit), 'utf8').toString('base64url') : undefined;
  return {
    data: page.map((t) => ({
      ...chain.txJson(t),
      blockNumber: Number(t.blockNumber),
      block_timestamp: Number(t.blockTimeMs),
      internal_transactions: [],
    })),
    success: true,
    meta: { at: Date.now(), page_size: page.length, ...(next ? { fingerprint: next } : {}) },
  };
}
