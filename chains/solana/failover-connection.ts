import { Connection, type Commitment } from '@solana/web3.js';
import { EndpointPool, type Endpoint } from '../rpc/endpoint-pool.js';
import type { RpcLogger, RpcObserver } from '../rpc/observer.js';
import { soleNetworkOfFamily } from '../registry.js';
import type { NetworkId } from '../vocabulary.js';

// Solana over several RPC endpoints (chains/rpc/endpoint-pool.ts rules). Two views:
// - `connection`: one @solana/web3.js Connection whose every HTTP request goes to the best endpoint and moves to the
//   next one on the endpoint's fault (network error, timeout, HTTP 429/5xx, a "node is behind"/internal JSON-RPC
//   error). Sends, balances, delegation reads use it.
// - `pin()`: the Connection of ONE endpoint, chosen after probing every endpoint's processed slot, for a whole
//   deposit poll: its slots, balances, signature lists and transactions then come from one node, so a lagging node
//   cannot answer part of a poll whose cursor another node set.

export interface SolanaEndpointsOptions {
  /** The registry's network (metrics and log labels); default the Solana family's only network. */
  network?: NetworkId;
  mode: string;
  urls: readonly string[];
  /** Slots an endpoint may trail the best processed slot before it leaves the rotation. */
  maxLagSlots: bigint;
  commitment: Commitment;
  timeoutMs?: number;
  observer?: RpcObserver;
  log?: RpcLogger;
}

export interface PinnedSolana {
  readonly label: string;
  readonly connection: Connection;
  fault(reason: string): void;
}

// -32005: node unhealthy / behind; -32603: internal; -32004/-32007/-32009/-32014: slot skipped, unavailable or not yet stored.
const NODE_FAULT_CODES = new Set([-32005, -32603, -32004, -32007, -32014]);

function methodOf(body: unknown): string {
  try {
    const msg = JSON.parse(String(body)) as { method?: string } | Array<{ method?: string }>;
    return (Array.isArray(msg) ? msg[0]?.method : msg.method) ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

export class SolanaEndpoints {
  readonly pool: EndpointPool;
  readonly connection: Connection;
  readonly #conns = new Map<Endpoint, Connection>();
  readonly #timeoutMs: number;

  constructor(o: SolanaEndpointsOptions) {
    this.pool = new EndpointPool({
      network: o.network ?? soleNetworkOfFamily('solana'),
      mode: o.mode,
      urls: o.urls,
      maxLagBlocks: o.maxLagSlots,
      observer: o.observer,
      log: o.log,
    });
    this.#timeoutMs = o.timeoutMs ?? 30_000;
    for (const e of this.pool.endpoints) {
      this.#conns.set(
        e,
        new Connection(e.url, { commitment: o.commitment, disableRetryOnRateLimit: true, fetch: (_url, init) => this.#send(e, init) }),
      );
    }
    const first = this.pool.endpoints[0]!;
    this.connection =
      this.pool.size === 1
        ? new Connection(first.url, {
            commitment: o.commitment,
            disableRetryOnRateLimit: false,
            fetch: (_url, init) => this.#send(first, init),
          })
        : new Connection(first.url, {
            commitment: o.commitment,
            disableRetryOnRateLimit: true,
            fetch: (_url, init) => this.#failover(init),
          });
  }

  /** A fetch over the endpoints (the URL argument is ignored): for raw JSON-RPC calls outside the Connection. */
  readonly fetch: typeof fetch = (_url, init) => (this.pool.size === 1 ? this.#send(this.pool.endpoints[0]!, init) : this.#failover(init));

  /** Probes every endpoint's processed slot, then pins the best one that answered. */
  async pin(): Promise<PinnedSolana> {
    let probe = this.pool.endpoints.filter((e) => this.pool.state(e) !== 'cooling');
    if (probe.length === 0) probe = [...this.pool.endpoints];
    const answered = new Set<Endpoint>();
    let last: unknown = null;
    await Promise.all(
      probe.map(async (e) => {
        try {
          this.pool.headSeen(e, BigInt(await this.#conns.get(e)!.getSlot('processed')));
          answered.add(e);
        } catch (err) {
          last = err;
        }
      }),
    );
    this.pool.reportHealth();
    const chosen = this.pool.order().find((e) => answered.has(e));
    if (!chosen) throw last ?? new Error('solana: no RPC endpoint answered');
    this.pool.serving(chosen);
    return { label: chosen.label, connection: this.#conns.get(chosen)!, fault: (reason) => this.pool.fault(chosen, reason) };
  }

  /**
   * The lowest `commitment` slot of `quorum` endpoints, `pinned` first: a slot counts as final only once that many
   * endpoints call it final, so one endpoint claiming a higher finalized slot cannot confirm a deposit early.
   * Fewer endpoints answering throws (the poll fails; nothing is confirmed).
   */
  async agreedSlot(pinned: PinnedSolana, pinnedSlot: number, quorum: number, commitment: Commitment): Promise<number> {
    let agreed = pinnedSlot;
    let votes = 1;
    for (const e of this.pool.order()) {
      if (votes >= quorum) break;
      if (e.label === pinned.label || this.pool.state(e) === 'cooling') continue;
      try {
        agreed = Math.min(agreed, await this.#conns.get(e)!.getSlot(commitment));
        votes++;
      } catch {
        /* the pool recorded the fault; ask the next endpoint */
      }
    }
    if (votes < quorum) throw new Error(`solana finality quorum: ${votes} of ${quorum} endpoints answered`);
    return agreed;
  }

  /** Each request to the best endpoint; on the endpoint's fault, to the next. The last answer or error stands. */
  async #failover(init: RequestInit | undefined): Promise<Response> {
    const order = this.pool.order();
    let last: unknown = null;
    for (const [i, e] of order.entries()) {
      try {
        const res = await this.#send(e, init);
        if (res.headers.get('x-endpoint-fault') === null || i === order.length - 1) {
          this.pool.serving(e);
          return res;
        }
        last = res;
      } catch (err) {
        last = err;
      }
    }
    if (last instanceof Response) return last;
    throw last;
  }

  /** One HTTP request to `e`, observed; an endpoint fault is recorded and marked on the response it returns. */
  async #send(e: Endpoint, init: RequestInit | undefined): Promise<Response> {
    const method = methodOf(init?.body);
    const t0 = performance.now();
    const done = (ok: boolean, fault: string | null) => {
      this.pool.call(e, method, ok, performance.now() - t0, fault);
      if (fault !== null) this.pool.fault(e, `${method}: ${fault}`);
    };
    let res: Response;
    try {
      res = await fetch(e.url, { ...init, signal: AbortSignal.timeout(this.#timeoutMs) });
    } catch (err) {
      const name = (err as { name?: string }).name;
      const timedOut = name === 'TimeoutError' || name === 'AbortError';
      done(false, timedOut ? 'timeout' : (err as Error).message);
      // Said with the method and the limit: the message reaches operators (reconcile's "node unreachable: ...").
      if (timedOut) throw Object.assign(new Error(`${method} timed out after ${this.#timeoutMs} ms`), { name: 'TimeoutError' });
      throw err;
    }
    const text = await res.text().catch(() => '');
    let fault: string | null = null;
    let answeredError = false;
    if (res.status === 429) fault = 'rate limited: HTTP 429';
    else if (res.status >= 500) fault = `HTTP ${res.status}`;
    else {
      try {
        const body = JSON.parse(text) as { error?: { code?: number; message?: string } };
        answeredError = body.error !== undefined;
        if (body.error && NODE_FAULT_CODES.has(Number(body.error.code)))
          fault = `JSON-RPC error ${body.error.code}: ${body.error.message ?? ''}`;
      } catch {
        fault = `HTTP ${res.status}, body is not JSON`;
      }
    }
    done(fault === null && res.ok && !answeredError, fault);
    const headers = new Headers(res.headers);
    if (fault !== null) headers.set('x-endpoint-fault', '1');
    return new Response(text, { status: res.status, statusText: res.statusText, headers });
  }
}
