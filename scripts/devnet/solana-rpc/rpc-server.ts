// FAKE Solana JSON-RPC endpoint over LiteSVM (see fake-validator.ts): JSON-RPC 2.0 over HTTP on 127.0.0.1,
// batches included, serving the subset of the validator RPC that @solana/web3.js Connection and @solana/spl-token
// use, with answers shaped as the Solana RPC documentation describes. It is not a validator: no gossip, no
// websocket subscriptions, no forks. Test controls are the `svm_*` methods (and the `validator` object in-process).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PublicKey } from '@solana/web3.js';
import bs58 from './base58.js';
import { FakeSolanaValidator, RpcError, type Commitment, type FakeValidatorOptions } from './fake-validator.js';
import { decodeMint, decodeTokenAccount, parsedMint, parsedTokenAccount, uiTokenAmount } from './token-layouts.js';
import { encodeTransaction, type TransactionEncoding } from './transaction-encoding.js';

export interface FakeSolanaRpcOptions extends FakeValidatorOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  validator?: FakeSolanaValidator;
}

export interface FakeSolanaRpc {
  url: string;
  port: number;
  validator: FakeSolanaValidator;
  /** Calls per RPC method since start or the last reset (batches count each call). */
  calls: Map<string, number>;
  resetCalls(): void;
  close(): Promise<void>;
}

type Params = unknown[];
type Handler = (params: Params) => unknown;

const MAX_BODY = 10 * 1024 * 1024;

export async function startFakeSolanaRpc(options: FakeSolanaRpcOptions = {}): Promise<FakeSolanaRpc> {
  const validator = options.validator ?? new FakeSolanaValidator(options);
  const calls = new Map<string, number>();
  const handlers = methodHandlers(validator, calls);
  const server: Server = createServer((req, res) => void serve(req, res, handlers, calls));
  // Idle connections are kept longer than any client here keeps a free socket (web3.js's keep-alive agent: 4 s), as a
  // hosted RPC's load balancer does: a client must never write to a socket this server already closed (ECONNRESET
  // under a stalled event loop). Connection faults are the fault proxy's job (test/support/rpc-fault-proxy.ts).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port, address } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}`,
    port,
    validator,
    calls,
    resetCalls: () => calls.clear(),
    close: async () => {
      validator.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function serve(req: IncomingMessage, res: ServerResponse, handlers: Map<string, Handler>, calls: Map<string, number>) {
  if (req.method !== 'POST') {
    res.writeHead(req.url === '/health' ? 200 : 405, { 'content-type': 'text/plain' }).end(req.url === '/health' ? 'ok' : '');
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) {
      res.writeHead(413).end();
      return;
    }
    chunks.push(chunk as Buffer);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return reply(res, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
  }
  if (Array.isArray(body)) {
    if (body.length === 0) return reply(res, { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: null });
    return reply(
      res,
      body.map((r) => call(r, handlers, calls)),
    );
  }
  reply(res, call(body, handlers, calls));
}

function reply(res: ServerResponse, payload: unknown) {
  const text = JSON.stringify(payload, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));
  res.writeHead(200, { 'content-type': 'application/json' }).end(text);
}

function call(req: unknown, handlers: Map<string, Handler>, calls: Map<string, number>) {
  const r = req as { jsonrpc?: unknown; method?: unknown; params?: unknown; id?: unknown };
  const id = r && typeof r === 'object' && (typeof r.id === 'string' || typeof r.id === 'number') ? r.id : null;
  if (!r || typeof r !== 'object' || r.jsonrpc !== '2.0' || typeof r.method !== 'string') {
    return { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id };
  }
  calls.set(r.method, (calls.get(r.method) ?? 0) + 1);
  const handler = handlers.get(r.method);
  if (!handler) return { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id };
  const params = r.params === undefined ? [] : r.params;
  if (!Array.isArray(params)) return { jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params: expected an array' }, id };
  try {
    return { jsonrpc: '2.0', result: handler(params), id };
  } catch (e) {
    if (e instanceof RpcError) {
      return { jsonrpc: '2.0', error: { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) }, id };
    }
    return { jsonrpc: '2.0', error: { code: -32603, message: `Internal error: ${(e as Error).message}` }, id };
  }
}

// ---- parameter helpers -----------------------------------------------------------------------------------------------

function invalid(message: string): never {
  throw new RpcError(-32602, `Invalid params: ${message}`);
}

function pubkeyParam(v: unknown, what = 'pubkey'): string {
  if (typeof v !== 'string') invalid(`${what} must be a base58 string`);
  try {
    return new PublicKey(v).toBase58();
  } catch {
    return invalid(`invalid ${what}`);
  }
}

function configParam(v: unknown): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) invalid('config must be an object');
  return v as Record<string, unknown>;
}

function commitmentParam(cfg: Record<string, unknown>, fallback: Commitment = 'finalized'): Commitment {
  const c: unknown = cfg.commitment ?? fallback;
  switch (c) {
    case 'processed':
    case 'confirmed':
    case 'finalized':
      return c;
    // Deprecated names still accepted by validators.
    case 'recent':
      return 'processed';
    case 'single':
    case 'singleGossip':
      return 'confirmed';
    case 'root':
    case 'max':
      return 'finalized';
    default:
      return invalid(`unknown commitment ${String(c)}`);
  }
}

/**
 * The commitment of a state read, refusing it as a validator does when that commitment's slot is below the request's
 * `minContextSlot`: error -32016 "Minimum context slot has not been reached", data {contextSlot}.
 */
function reachedCommitment(v: FakeSolanaValidator, cfg: Record<string, unknown>): Commitment {
  const c = commitmentParam(cfg);
  const min = cfg.minContextSlot;
  if (min !== undefined && (typeof min !== 'number' || !Number.isSafeInteger(min) || min < 0))
    invalid('minContextSlot must be a slot number');
  const slot = v.slot(c);
  if (typeof min === 'number' && slot < min) throw new RpcError(-32016, 'Minimum context slot has not been reached', { contextSlot: slot });
  return c;
}

function atLeastConfirmed(cfg: Record<string, unknown>): Commitment {
  const c = commitmentParam(cfg);
  if (c === 'processed') invalid('Method does not support commitment below `confirmed`');
  return c;
}

function bigintParam(v: unknown, what: string): bigint {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === 'string' && /^\d+$/.test(v)) return BigInt(v);
  return invalid(`${what} must be a non-negative integer`);
}

function txBytesParam(v: unknown, cfg: Record<string, unknown>): Uint8Array {
  if (typeof v !== 'string') invalid('transaction must be a string');
  const encoding = cfg.encoding ?? 'base58';
  if (encoding === 'base64') return Uint8Array.from(Buffer.from(v, 'base64'));
  if (encoding === 'base58') return bs58.decode(v);
  return invalid(`unsupported encoding ${String(encoding)}`);
}

// ---- methods -----------------------------------------------------------------------------------------------------

function methodHandlers(v: FakeSolanaValidator, calls: Map<string, number>): Map<string, Handler> {
  const ctx = (commitment: Commitment) => ({ slot: v.slot(commitment), apiVersion: '2.2.0' });

  const encodeAccount = (address: string, cfg: Record<string, unknown>) => {
    const acc = v.account(address, commitmentParam(cfg));
    if (!acc) return null;
    const encoding = (cfg.encoding as string | undefined) ?? 'base58';
    let data: unknown;
    if (encoding === 'jsonParsed') {
      const token = decodeTokenAccount(acc.owner, acc.data);
      const mint = token ? null : decodeMint(acc.owner, acc.data);
      if (token) data = parsedTokenAccount(token, v.mintDecimals(token.mint) ?? 0, acc.data.length, acc.owner);
      else if (mint) data = parsedMint(mint, acc.data.length, acc.owner);
      else data = [Buffer.from(acc.data).toString('base64'), 'base64'];
    } else if (encoding === 'base64') {
      data = [Buffer.from(acc.data).toString('base64'), 'base64'];
    } else if (encoding === 'base58') {
      data = [bs58.encode(acc.data), 'base58'];
    } else {
      invalid(`unsupported encoding ${encoding}`);
    }
    return {
      data,
      executable: acc.executable,
      lamports: Number(acc.lamports),
      owner: acc.owner,
      rentEpoch: 18446744073709551615,
      space: acc.data.length,
    };
  };

  const h = new Map<string, Handler>();
  h.set('getHealth', () => 'ok');
  h.set('getVersion', () => ({ 'solana-core': '2.2.0-fake-litesvm', 'feature-set': 0 }));
  h.set('getGenesisHash', () => v.genesisHash);
  h.set('getSlot', ([cfg]) => v.slot(commitmentParam(configParam(cfg))));
  h.set('getBlockHeight', ([cfg]) => v.blockHeight(commitmentParam(configParam(cfg))));
  h.set('getBlockTime', ([slot]) => {
    const t = v.blockTime(Number(bigintParam(slot, 'slot')));
    if (t === null) throw new RpcError(-32004, `Block not available for slot ${String(slot)}`);
    return t;
  });
  h.set('getEpochInfo', ([cfg]) => {
    const slot = v.slot(commitmentParam(configParam(cfg)));
    const slotsInEpoch = 432_000;
    return {
      absoluteSlot: slot,
      blockHeight: v.blockHeight(commitmentParam(configParam(cfg))),
      epoch: Math.floor(slot / slotsInEpoch),
      slotIndex: slot % slotsInEpoch,
      slotsInEpoch,
      transactionCount: v.transactionCount(),
    };
  });
  h.set('getLatestBlockhash', ([cfg]) => {
    const c = commitmentParam(configParam(cfg));
    return { context: ctx(c), value: v.latestBlockhash(c) };
  });
  h.set('isBlockhashValid', ([hash, cfg]) => {
    if (typeof hash !== 'string') invalid('blockhash must be a string');
    return { context: ctx(commitmentParam(configParam(cfg))), value: v.isBlockhashValid(hash) };
  });
  h.set('getRecentPrioritizationFees', ([addresses]) => {
    const list = addresses === undefined || addresses === null ? [] : addresses;
    if (!Array.isArray(list) || list.length > 128) invalid('expected at most 128 account addresses');
    return v.recentPrioritizationFees(list.map((a) => pubkeyParam(a, 'account')));
  });
  h.set('getMinimumBalanceForRentExemption', ([len]) => Number(v.svm.minimumBalanceForRentExemption(bigintParam(len, 'data length'))));
  h.set('getFeeForMessage', ([, cfg]) => ({ context: ctx(commitmentParam(configParam(cfg))), value: v.lamportsPerSignature }));
  h.set('getBalance', ([address, cfg]) => {
    const c = reachedCommitment(v, configParam(cfg));
    return { context: ctx(c), value: Number(v.account(pubkeyParam(address), c)?.lamports ?? 0n) };
  });
  h.set('getAccountInfo', ([address, cfg]) => {
    const config = configParam(cfg);
    return { context: ctx(reachedCommitment(v, config)), value: encodeAccount(pubkeyParam(address), config) };
  });
  h.set('getMultipleAccounts', ([addresses, cfg]) => {
    if (!Array.isArray(addresses) || addresses.length > 100) invalid('expected an array of at most 100 addresses');
    const config = configParam(cfg);
    // The context slot is the slot whose state the accounts are (at `finalized`: replayed to it, fake-validator.ts).
    return { context: ctx(reachedCommitment(v, config)), value: addresses.map((a) => encodeAccount(pubkeyParam(a), config)) };
  });
  h.set('getTokenAccountBalance', ([address, cfg]) => {
    const addr = pubkeyParam(address);
    const c = commitmentParam(configParam(cfg));
    const acc = v.account(addr, c);
    const token = acc ? decodeTokenAccount(acc.owner, acc.data) : null;
    if (!acc || !token) throw new RpcError(-32602, 'Invalid param: could not find account');
    return { context: ctx(c), value: uiTokenAmount(token.amount, v.mintDecimals(token.mint) ?? 0) };
  });
  h.set('getTokenAccountsByOwner', ([owner, filter, cfg]) => {
    const f = configParam(filter);
    if ((f.mint === undefined) === (f.programId === undefined)) invalid('filter needs exactly one of mint, programId');
    const config = configParam(cfg);
    const found = v.tokenAccountsByOwner(pubkeyParam(owner, 'owner'), {
      mint: f.mint === undefined ? undefined : pubkeyParam(f.mint, 'mint'),
      programId: f.programId === undefined ? undefined : pubkeyParam(f.programId, 'programId'),
    });
    return {
      context: ctx(commitmentParam(config)),
      value: found.map((a) => ({ pubkey: a.address, account: encodeAccount(a.address, config) })).filter((a) => a.account !== null),
    };
  });
  h.set('getSignatureStatuses', ([sigs]) => {
    if (!Array.isArray(sigs) || sigs.length > 256) invalid('expected an array of at most 256 signatures');
    return {
      context: ctx('processed'),
      value: sigs.map((s) => {
        const st = typeof s === 'string' ? v.signatureStatus(s) : null;
        if (!st) return null;
        const status = v.commitmentOf(st.slot);
        return {
          slot: st.slot,
          confirmations: status === 'finalized' ? null : v.slot('processed') - st.slot,
          err: st.err,
          status: st.err === null ? { Ok: null } : { Err: st.err },
          confirmationStatus: status,
        };
      }),
    };
  });
  h.set('getSignaturesForAddress', ([address, cfg]) => {
    const config = configParam(cfg);
    const limit = config.limit === undefined ? 1000 : Number(bigintParam(config.limit, 'limit'));
    if (limit < 1 || limit > 1000) invalid('limit must be 1..1000');
    const list = v.signaturesForAddress(pubkeyParam(address, 'address'), {
      before: typeof config.before === 'string' ? config.before : undefined,
      until: typeof config.until === 'string' ? config.until : undefined,
      limit,
      commitment: atLeastConfirmed(config),
    });
    return list.map((r) => ({
      signature: r.signature,
      slot: r.slot,
      err: r.err,
      memo: null,
      blockTime: r.blockTime,
      confirmationStatus: v.commitmentOf(r.slot),
    }));
  });
  // Blocks without transaction bodies: transactionDetails `none` (the default here is `full`, which is not served)
  // or `signatures`. Minimum commitment `confirmed`, as on a validator.
  h.set('getBlock', ([slot, cfg]) => {
    const config = configParam(cfg);
    const s = Number(bigintParam(slot, 'slot'));
    const details = config.transactionDetails ?? 'full';
    if (details !== 'none' && details !== 'signatures') invalid(`transactionDetails ${String(details)} is not supported by this endpoint`);
    const b = v.block(s, atLeastConfirmed(config));
    if (!b) throw new RpcError(-32004, `Block not available for slot ${s}`);
    return {
      blockhash: b.blockhash,
      previousBlockhash: b.previousBlockhash,
      parentSlot: b.parentSlot,
      blockHeight: b.blockHeight,
      blockTime: b.blockTime,
      ...(details === 'signatures' ? { signatures: b.signatures } : {}),
      ...(config.rewards === false ? {} : { rewards: [] }),
    };
  });
  h.set('getTransaction', ([sig, cfg]) => {
    if (typeof sig !== 'string') invalid('signature must be a string');
    const config = configParam(typeof cfg === 'string' ? { encoding: cfg } : cfg);
    const rec = v.transaction(sig, atLeastConfirmed(config));
    if (!rec) return null;
    const max = config.maxSupportedTransactionVersion;
    if (rec.tx.message.version !== 'legacy' && (max === undefined || max === null || Number(max) < rec.tx.message.version)) {
      throw new RpcError(
        -32015,
        `Transaction version (${rec.tx.message.version}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${rec.tx.message.version}`,
      );
    }
    const encoding = (config.encoding as TransactionEncoding | undefined) ?? 'json';
    if (!['json', 'jsonParsed', 'base64', 'base58'].includes(encoding)) invalid(`unsupported encoding ${encoding}`);
    return encodeTransaction(rec, encoding, (m) => v.mintDecimals(m));
  });
  h.set('sendTransaction', ([tx, cfg]) => {
    const config = configParam(cfg);
    return v.submit(txBytesParam(tx, config), { skipPreflight: config.skipPreflight === true });
  });
  h.set('simulateTransaction', ([tx, cfg]) => {
    const config = configParam(cfg);
    const replace = config.replaceRecentBlockhash === true;
    const sim = v.simulate(txBytesParam(tx, config), { sigVerify: config.sigVerify === true, replaceRecentBlockhash: replace });
    const c = commitmentParam(config);
    return {
      context: ctx(c),
      value: {
        err: sim.err,
        logs: sim.logs,
        accounts: null,
        unitsConsumed: sim.unitsConsumed,
        returnData: null,
        innerInstructions: null,
        ...(replace ? { replacementBlockhash: v.latestBlockhash(c) } : {}),
      },
    };
  });
  h.set('requestAirdrop', ([address, lamports]) => v.airdrop(pubkeyParam(address), bigintParam(lamports, 'lamports')));

  // ---- test controls (not part of the Solana RPC) ----
  h.set('svm_advanceSlots', ([n]) => v.advanceSlots(n === undefined ? 1 : Number(bigintParam(n, 'slots'))));
  h.set('svm_warpToSlot', ([slot]) => v.warpToSlot(Number(bigintParam(slot, 'slot'))));
  h.set('svm_expireBlockhash', () => v.expireBlockhashes());
  h.set('svm_advanceTime', ([seconds]) => {
    if (typeof seconds !== 'number' || !Number.isInteger(seconds)) invalid('seconds must be an integer');
    v.advanceTime(seconds);
    return v.now();
  });
  h.set('svm_pauseLanding', ([mode]) => {
    if (mode !== undefined && mode !== 'hold' && mode !== 'drop') invalid('mode must be hold or drop');
    v.pauseLanding(mode ?? 'hold');
    return true;
  });
  h.set('svm_resumeLanding', () => v.resumeLanding());
  h.set('svm_dropNext', ([n]) => v.dropNext(Number(bigintParam(n === undefined ? 1 : n, 'n'))));
  h.set('svm_setPriorityFeeFloor', ([fee]) => {
    v.setPriorityFeeFloor(Number(bigintParam(fee, 'fee')));
    return true;
  });
  h.set('svm_airdrop', ([address, lamports]) => v.airdrop(pubkeyParam(address), bigintParam(lamports, 'lamports')));
  h.set('svm_createMint', ([cfg]) => {
    const c = configParam(cfg);
    return v.createMint({
      address: c.address === undefined ? undefined : pubkeyParam(c.address, 'address'),
      decimals: Number(bigintParam(c.decimals, 'decimals')),
      mintAuthority: c.mintAuthority === undefined ? null : pubkeyParam(c.mintAuthority, 'mintAuthority'),
      freezeAuthority: c.freezeAuthority === undefined ? null : pubkeyParam(c.freezeAuthority, 'freezeAuthority'),
      programId: c.programId === undefined ? undefined : pubkeyParam(c.programId, 'programId'),
    });
  });
  h.set('svm_setTokenAccount', ([cfg]) => {
    const c = configParam(cfg);
    return v.setTokenAccount({
      mint: pubkeyParam(c.mint, 'mint'),
      owner: pubkeyParam(c.owner, 'owner'),
      amount: bigintParam(c.amount, 'amount'),
      address: c.address === undefined ? undefined : pubkeyParam(c.address, 'address'),
    });
  });
  h.set('svm_getCallCounts', () => Object.fromEntries(calls));
  h.set('svm_resetCallCounts', () => {
    calls.clear();
    return true;
  });
  return h;
}
