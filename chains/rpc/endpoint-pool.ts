import { redactUrl, scrubUrl } from './redact.js';
import { noopRpcObserver, silentRpcLogger, type EndpointState, type RpcLogger, type RpcObserver } from './observer.js';

// Health of the RPC endpoints of one chain, and the order in which calls try them.
// Invariants:
// - health only ORDERS endpoints, it never refuses one: with every endpoint in trouble, calls still try them all, so
//   one configured endpoint behaves exactly as before failover existed;
// - an endpoint at fault (timeout, 5xx, 429, bad answer, inconsistent data) cools down for an exponentially growing
//   time, then serves on probation until it has answered `probationSuccesses` head probes in a row;
// - the best head is the highest one reported by an endpoint in rotation (healthy), so an endpoint on probation that
//   claims a head far ahead of every healthy one can neither promote itself nor push the others out as "lagging".

export interface PoolOptions {
  network: string;
  mode: string;
  urls: readonly string[];
  /** An endpoint whose head is more than this many blocks (slots) behind the best head is out of rotation. */
  maxLagBlocks: bigint;
  cooldownBaseMs?: number;
  cooldownMaxMs?: number;
  probationSuccesses?: number;
  observer?: RpcObserver;
  log?: RpcLogger;
  now?: () => number;
}

export class Endpoint {
  /** Redacted URL, unique in its pool (set once, by the pool). */
  label: string;
  head: bigint | null = null;
  /** Consecutive faults (forgotten after `FAULT_MEMORY_MS` without one): the exponent of the cool-down. */
  faults = 0;
  lastFaultAt = 0;
  lastFault: string | null = null;
  cooldownUntil = 0;
  /** Head probes still to answer before the endpoint is back in rotation; 0 = not on probation. */
  probationLeft = 0;

  constructor(
    readonly index: number,
    readonly url: string,
  ) {
    this.label = redactUrl(url);
  }
}

const FAULT_MEMORY_MS = 5 * 60_000;

export class EndpointPool {
  readonly endpoints: readonly Endpoint[];
  readonly #o: PoolOptions;
  readonly #observer: RpcObserver;
  readonly #log: RpcLogger;
  readonly #now: () => number;
  #active: Endpoint | null = null;

  constructor(o: PoolOptions) {
    if (o.urls.length === 0) throw new Error(`${o.network} (${o.mode}): no RPC endpoint`);
    this.#o = o;
    this.#observer = o.observer ?? noopRpcObserver;
    this.#log = o.log ?? silentRpcLogger;
    this.#now = o.now ?? Date.now;
    const labels = new Set<string>();
    this.endpoints = o.urls.map((url, i) => {
      const e = new Endpoint(i, url);
      // Two URLs differing only in their key would share a label: number them apart.
      if (labels.has(e.label)) e.label = `${e.label}#${i}`;
      labels.add(e.label);
      return e;
    });
  }

  get size(): number {
    return this.endpoints.length;
  }

  get chain(): string {
    return `${this.#o.network} (${this.#o.mode})`;
  }

  state(e: Endpoint, best = this.bestHead()): EndpointState {
    if (this.#now() < e.cooldownUntil) return 'cooling';
    if (e.probationLeft > 0) return 'probation';
    if (best !== null && e.head !== null && best - e.head > this.#o.maxLagBlocks) return 'lagging';
    return 'healthy';
  }

  /** Highest head of an endpoint in rotation (not cooling, not on probation); null when none is known. */
  bestHead(): bigint | null {
    let best: bigint | null = null;
    for (const e of this.endpoints) {
      if (e.head === null || this.#now() < e.cooldownUntil || e.probationLeft > 0) continue;
      if (best === null || e.head > best) best = e.head;
    }
    return best;
  }

  /** Healthy endpoints in configured order, then probation, then lagging, then cooling (soonest back first). */
  order(): Endpoint[] {
    const best = this.bestHead();
    const rank: Record<EndpointState, number> = { healthy: 0, probation: 1, lagging: 2, cooling: 3 };
    return [...this.endpoints].sort((a, b) => {
      const ra = rank[this.state(a, best)];
      const rb = rank[this.state(b, best)];
      if (ra !== rb) return ra - rb;
      if (ra === 3) return a.cooldownUntil - b.cooldownUntil;
      return a.index - b.index;
    });
  }

  /** The endpoint failed through its own fault: cool it down, put it on probation, say so. */
  fault(e: Endpoint, reason: string): void {
    const now = this.#now();
    const safe = scrubUrl(reason, e.url, e.label);
    e.faults = now - e.lastFaultAt > FAULT_MEMORY_MS ? 1 : e.faults + 1;
    e.lastFaultAt = now;
    e.lastFault = safe;
    const base = this.#o.cooldownBaseMs ?? 1000;
    e.cooldownUntil = now + Math.min(this.#o.cooldownMaxMs ?? 60_000, base * 2 ** Math.min(e.faults - 1, 20));
    e.probationLeft = this.#o.probationSuccesses ?? 3;
    this.#log.warn(
      {
        network: this.#o.network,
        mode: this.#o.mode,
        endpoint: e.label,
        reason: safe,
        cooldownMs: e.cooldownUntil - now,
        faults: e.faults,
      },
      'rpc endpoint failed; cooling down',
    );
    this.#health(e);
  }

  /** A head probe answered: record the head; on probation, count it unless it claims to be far ahead of every healthy endpoint. */
  headSeen(e: Endpoint, head: bigint): void {
    e.head = head;
    if (e.probationLeft > 0 && this.#now() >= e.cooldownUntil) {
      const best = this.bestHead();
      if (best === null || head <= best + this.#o.maxLagBlocks) {
        e.probationLeft--;
        if (e.probationLeft === 0)
          this.#log.info({ network: this.#o.network, mode: this.#o.mode, endpoint: e.label }, 'rpc endpoint back in rotation');
      }
    }
  }

  /** Reports every endpoint's state and lag (after a round of head probes). */
  reportHealth(): void {
    for (const e of this.endpoints) this.#health(e);
  }

  #health(e: Endpoint): void {
    const best = this.bestHead();
    this.#observer.onHealth({
      network: this.#o.network,
      mode: this.#o.mode,
      endpoint: e.label,
      state: this.state(e, best),
      head: e.head,
      lag: best !== null && e.head !== null ? (best > e.head ? best - e.head : 0n) : null,
    });
  }

  call(e: Endpoint, method: string, ok: boolean, ms: number, fault: string | null): void {
    this.#observer.onCall({
      network: this.#o.network,
      mode: this.#o.mode,
      endpoint: e.label,
      method,
      ok,
      ms,
      fault: fault && scrubUrl(fault, e.url, e.label),
    });
  }

  /** Records which endpoint serves now; a change is a failover (logged and observed) with the reason the previous one lost its place. */
  serving(e: Endpoint): void {
    const prev = this.#active;
    this.#active = e;
    if (!prev || prev === e) return;
    const st = this.state(prev);
    const reason =
      st === 'healthy'
        ? 'recovered endpoint preferred'
        : st === 'lagging'
          ? `lagging ${this.bestHead()! - (prev.head ?? 0n)} blocks`
          : `${st}: ${prev.lastFault ?? 'unknown'}`;
    this.#log.warn({ network: this.#o.network, mode: this.#o.mode, from: prev.label, to: e.label, reason }, 'rpc failover');
    this.#observer.onFailover({ network: this.#o.network, mode: this.#o.mode, from: prev.label, to: e.label, reason });
  }

  get active(): Endpoint | null {
    return this.#active;
  }
}
