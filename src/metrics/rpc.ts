import { LATENCY_BUCKETS, metrics } from './registry.js';

// RPC metrics of the chain clients (fed by the RPC clients; deploy/prometheus/alerts.yml's RpcErrorRate reads them).
// `endpoint` is endpointLabel(url): host and port only, so an API key in a path or query never becomes a label.

export const RPC_OUTCOMES = ['ok', 'error', 'timeout', 'rate_limited'] as const;
export type RpcOutcome = (typeof RPC_OUTCOMES)[number];

type RpcLabels = 'network' | 'mode' | 'endpoint' | 'method';

export const rpcRequests = metrics.counter<RpcLabels | 'outcome'>({
  name: 'stablepay_rpc_requests_total',
  help: 'RPC calls to chain endpoints by network, mode, endpoint (host), method and outcome.',
  labels: ['network', 'mode', 'endpoint', 'method', 'outcome'],
  values: { outcome: RPC_OUTCOMES, mode: ['test', 'live'] },
  maxSeries: 2000,
});

export const rpcDuration = metrics.histogram<RpcLabels>({
  name: 'stablepay_rpc_request_duration_seconds',
  help: 'Latency of RPC calls to chain endpoints.',
  labels: ['network', 'mode', 'endpoint', 'method'],
  values: { mode: ['test', 'live'] },
  buckets: LATENCY_BUCKETS,
  maxSeries: 1000,
});

export const rpcEndpointHealthy = metrics.gauge<'network' | 'mode' | 'endpoint'>({
  name: 'stablepay_rpc_endpoint_healthy',
  help: '1 while an endpoint is in rotation, 0 while it is failed over.',
  labels: ['network', 'mode', 'endpoint'],
  values: { mode: ['test', 'live'] },
});

export const rpcEndpointLag = metrics.gauge<'network' | 'mode' | 'endpoint'>({
  name: 'stablepay_rpc_endpoint_lag_blocks',
  help: "Blocks an endpoint's head is behind the best head seen across the chain's endpoints.",
  labels: ['network', 'mode', 'endpoint'],
  values: { mode: ['test', 'live'] },
});

/** The label for an endpoint URL: `host:port` (never the path, query or credentials, which may hold an API key). */
export function endpointLabel(url: string): string {
  try {
    const u = new URL(url);
    return u.port ? `${u.hostname}:${u.port}` : u.hostname;
  } catch {
    return 'invalid';
  }
}

/** Times one RPC call and records its outcome; rethrows what the call threw. */
export async function observeRpc<T>(
  l: { network: string; mode: string; endpoint: string; method: string },
  call: () => Promise<T>,
  classify: (err: unknown) => RpcOutcome = () => 'error',
): Promise<T> {
  const stop = rpcDuration.startTimer(l);
  try {
    const r = await call();
    rpcRequests.inc({ ...l, outcome: 'ok' });
    return r;
  } catch (e) {
    rpcRequests.inc({ ...l, outcome: classify(e) });
    throw e;
  } finally {
    stop();
  }
}
