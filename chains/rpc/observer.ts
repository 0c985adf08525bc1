// What the failover layer tells the outside (metrics, tests). Labels are bounded: `endpoint` is the redacted URL of a
// configured endpoint (chains/rpc/redact.ts), `method` a JSON-RPC method name; never an address or an id.

export type EndpointState = 'healthy' | 'probation' | 'lagging' | 'cooling';

export interface RpcCallEvent {
  network: string;
  mode: string;
  endpoint: string;
  method: string;
  ok: boolean;
  ms: number;
  /** Why the call failed when it was the endpoint's fault (timeout, http 503, ...); null on success or a request error. */
  fault: string | null;
}

export interface RpcFailoverEvent {
  network: string;
  mode: string;
  from: string;
  to: string;
  reason: string;
}

export interface RpcHealthEvent {
  network: string;
  mode: string;
  endpoint: string;
  state: EndpointState;
  head: bigint | null;
  /** Blocks (slots) behind the best head of a healthy endpoint; null until both are known. */
  lag: bigint | null;
}

export interface RpcObserver {
  onCall(e: RpcCallEvent): void;
  onFailover(e: RpcFailoverEvent): void;
  onHealth(e: RpcHealthEvent): void;
}

export interface RpcLogger {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
}

export const noopRpcObserver: RpcObserver = { onCall() {}, onFailover() {}, onHealth() {} };
export const silentRpcLogger: RpcLogger = { info() {}, warn() {} };
