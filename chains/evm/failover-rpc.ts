import { EndpointPool, type Endpoint, type PoolOptions } from '../rpc/endpoint-pool.js';
import { JsonRpcClient, type RpcBatchItem, type RpcCaller, type RpcRequest } from './rpc-client.js';
import { RpcError } from './rpc-errors.js';

// JSON-RPC over several endpoints of one chain (EVM, and TRON's Ethereum-compatible JSON-RPC). A call goes to the
// healthiest endpoint and moves to the next one when the failure is the endpoint's fault; a failure that is the
// request's (a revert, invalid params, a range too large) is the answer and is returned as is.
// eth_getLogs over a range is only sent to an endpoint whose head covers the range's last block: a node behind it
// answers an empty list, which would look like "no transfer" and skip a deposit.

export interface FailoverRpcOptions extends Omit<PoolOptions, 'maxLagBlocks'> {
  maxLagBlocks?: bigint;
  timeoutMs?: number;
  /** Extra headers on every request (e.g. TRON-PRO-API-KEY): secrets, never logged. */
  headers?: Record<string, string>;
}

/** One endpoint, chosen for the length of a poll, so that head, headers and logs come from the same node. */
export interface PinnedRpc extends RpcCaller {
  readonly label: string;
  /** Its head when it was pinned. */
  readonly head: bigint;
  /** Records a fault that only the caller could see (missing block below its own head, inconsistent hashes). */
  fault(reason: string): void;
}

const NODE_FAULT =
  /header not found|missing trie node|unknown block|not synced|syncing|internal error|upstream|timeout|timed out|overload|unavailable/i;

/** Why a failure is the endpoint's fault, or null when it is the request's (the same request fails everywhere). */
export function endpointFault(e: unknown): string | null {
  if (!(e instanceof RpcError)) return null;
  switch (e.kind) {
    case 'timeout':
      return 'timeout';
    case 'rate_limited':
      return `rate limited: ${e.message}`;
    case 'unavailable':
    case 'bad_response':
      return e.message;
    case 'rpc_error':
      return e.code === -32603 || NODE_FAULT.test(e.message) ? `JSON-RPC error ${e.code}: ${e.message}` : null;
    case 'range_too_large':
      return null;
  }
}

/**
 * A send's failure without a clear answer, as an error no caller reads as the node refusing the bytes: a JSON-RPC
 * error that is the node's fault (an internal error) becomes `unavailable`; timeouts and transport failures stay.
 */
function unanswered(e: unknown): unknown {
  if (!(e instanceof RpcError) || e.kind !== 'rpc_error') return e;
  return new RpcError('unavailable', `eth_sendRawTransaction got no clear answer (the bytes may have been taken): ${e.message}`, e.code);
}

function logsUpperBlock(method: string, params: unknown[]): bigint | null {
  if (method !== 'eth_getLogs') return null;
  const to = (params[0] as { toBlock?: unknown } | undefined)?.toBlock;
  return typeof to === 'string' && /^0x[0-9a-f]+$/i.test(to) ? BigInt(to) : null;
}

export class FailoverJsonRpc implements RpcCaller {
  readonly pool: EndpointPool;
  readonly #clients: Map<Endpoint, JsonRpcClient>;

  constructor(o: FailoverRpcOptions) {
    this.pool = new EndpointPool({ ...o, maxLagBlocks: o.maxLagBlocks ?? 10n });
    this.#clients = new Map(
      this.pool.endpoints.map((e) => [e, new JsonRpcClient({ url: e.url, timeoutMs: o.timeoutMs, headers: o.headers })]),
    );
  }

  get size(): number {
    return this.pool.size;
  }

  /** Calls made, by method, over all endpoints. */
  get calls(): Map<string, number> {
    const all = new Map<string, number>();
    for (const c of this.#clients.values()) for (const [m, n] of c.calls) all.set(m, (all.get(m) ?? 0) + n);
    return all;
  }

  get totalCalls(): number {
    let n = 0;
    for (const c of this.#clients.values()) n += c.totalCalls;
    return n;
  }

  async call<T>(method: string, params: unknown[]): Promise<T> {
    const upper = logsUpperBlock(method, params);
    let last: unknown = null;
    // A transaction offered to an endpoint that failed without a clear answer (a timeout, a dropped connection, an
    // internal error) may have been taken and propagated: a later endpoint's refusal of the same bytes is then no
    // proof that they cannot land, so the ambiguous failure is what the caller sees (docs/outbound.md).
    let maybeTaken: unknown = null;
    for (const e of this.pool.order()) {
      if (upper !== null && !(await this.#covers(e, upper))) {
        last ??= new RpcError('unavailable', `${method}: no endpoint's head covers block ${upper}`);
        continue;
      }
      try {
        const result = await this.#send<T>(e, method, params);
        this.pool.serving(e);
        return result;
      } catch (err) {
        if (endpointFault(err) === null) throw maybeTaken ?? err;
        if (method === 'eth_sendRawTransaction' && !(err instanceof RpcError && err.kind === 'rate_limited'))
          maybeTaken ??= unanswered(err);
        last = err;
      }
    }
    if (maybeTaken) throw maybeTaken;
    throw last ?? new RpcError('unavailable', `${method}: no RPC endpoint`);
  }

  /**
   * `requests` in one JSON-RPC batch, to the healthiest endpoint; the whole batch moves to the next endpoint when the
   * request failed by the endpoint's fault, or when any item did (a node behind the block asked for), so every answer
   * comes from the same node. Item failures that are the request's own (a revert) are returned in their slot.
   */
  async batch<T>(requests: readonly RpcRequest[]): Promise<Array<RpcBatchItem<T>>> {
    if (requests.length === 0) return [];
    let last: unknown = null;
    for (const e of this.pool.order()) {
      const t0 = performance.now();
      try {
        const items = await this.#clients.get(e)!.batch<T>(requests);
        const faulty = items.find((i) => !i.ok && endpointFault(i.error) !== null);
        const fault = faulty && !faulty.ok ? endpointFault(faulty.error) : null;
        this.pool.call(e, 'batch', fault === null, performance.now() - t0, fault);
        if (fault === null) {
          this.pool.serving(e);
          return items;
        }
        this.pool.fault(e, `batch: ${fault}`);
        last = faulty && !faulty.ok ? faulty.error : null;
      } catch (err) {
        const fault = endpointFault(err);
        this.pool.call(e, 'batch', false, performance.now() - t0, fault);
        if (fault === null) throw err;
        this.pool.fault(e, `batch: ${fault}`);
        last = err;
      }
    }
    throw last ?? new RpcError('unavailable', 'batch: no RPC endpoint');
  }

  /**
   * Probes every endpoint's head (cooling ones only when all are cooling), then pins the best one that answered.
   * With one endpoint this is one eth_blockNumber, as before failover existed.
   */
  async pin(): Promise<PinnedRpc> {
    let probe = this.pool.endpoints.filter((e) => this.pool.state(e) !== 'cooling');
    if (probe.length === 0) probe = [...this.pool.endpoints];
    const answered = new Set<Endpoint>();
    let last: unknown = null;
    await Promise.all(
      probe.map(async (e) => {
        try {
          this.pool.headSeen(e, BigInt(await this.#send<string>(e, 'eth_blockNumber', [])));
          answered.add(e);
        } catch (err) {
          last = err;
        }
      }),
    );
    this.pool.reportHealth();
    const chosen = this.pool.order().find((e) => answered.has(e));
    if (!chosen) throw last ?? new RpcError('unavailable', 'no RPC endpoint answered');
    this.pool.serving(chosen);
    return this.#pinned(chosen);
  }

  /** The other endpoints not cooling down, whose head is known, best first (reorg confirmation, finality quorum). */
  others(pinned: PinnedRpc): PinnedRpc[] {
    return this.pool
      .order()
      .filter((e) => e.label !== pinned.label && e.head !== null && this.pool.state(e) !== 'cooling')
      .map((e) => this.#pinned(e));
  }

  #pinned(e: Endpoint): PinnedRpc {
    return {
      label: e.label,
      head: e.head!,
      call: <T>(method: string, params: unknown[]) => this.#send<T>(e, method, params),
      fault: (reason) => this.pool.fault(e, reason),
    };
  }

  async #covers(e: Endpoint, block: bigint): Promise<boolean> {
    if (e.head !== null && e.head >= block) return true;
    try {
      this.pool.headSeen(e, BigInt(await this.#send<string>(e, 'eth_blockNumber', [])));
    } catch {
      return false;
    }
    return e.head !== null && e.head >= block;
  }

  async #send<T>(e: Endpoint, method: string, params: unknown[]): Promise<T> {
    const t0 = performance.now();
    try {
      const result = await this.#clients.get(e)!.call<T>(method, params);
      this.pool.call(e, method, true, performance.now() - t0, null);
      return result;
    } catch (err) {
      const fault = endpointFault(err);
      this.pool.call(e, method, false, performance.now() - t0, fault);
      if (fault !== null) this.pool.fault(e, `${method}: ${fault}`);
      throw err;
    }
  }
}
