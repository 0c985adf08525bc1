import type { RpcObserver } from '../../chains/rpc/observer.js';
import { LATENCY_BUCKETS, metrics } from './registry.js';

// RPC metrics of the chain clients (fed by the RPC clients; deploy/prometheus/alerts.yml's RpcErrorRate reads them).
// `endpoint` is endpointLabel(url): host and port only, so an API key in a path or query never becomes a label.

/** `request_error`: the node answered, and the request itself was refused (a revert, a range too large): not the endpoint's fault. */
export const RPC_OUTCOMES = ['ok', 'error', 'timeout', 'rate_limited', 'request_error'] as const;
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

export const rpcFailovers = metrics.counter<'network' | 'mode' | 'from' | 'to'>({
  name: 'stablepay_rpc_failovers_total',
  help: 'Requests or polls moved from one endpoint of a chain to another.',
  labels: ['network', 'mode', 'from', 'to'],
  values: { mode: ['test', 'live'] },
  maxSeries: 200,
});

/** Feeds the RPC metrics from the chain clients' failover layer (chains/rpc/observer.ts); labels are host:port only. */
export const rpcMetricsObserver: RpcObserver = {
  onCall(e) {
    const l = { network: e.network, mode: e.mode, endpoint: endpointLabel(e.endpoint), method: e.method };
    const outcome: RpcOutcome = e.ok
      ? 'ok'
      : e.fault === null
        ? 'request_error'
        : /timeout|timed out/i.test(e.fault)
          ? 'timeout'
          : /429/.test(e.fault)
            ? 'rate_limited'
            : 'error';
    rpcRequests.inc({ ...l, outcome });
    rpcDuration.observe(l, e.ms / 1000);
  },
  onFailover(e) {
    rpcFailovers.inc({ network: e.network, mode: e.mode, from: endpointLabel(e.from), to: endpointLabel(e.to) });
  },
  onHealth(e) {
    const l = { network: e.network, mode: e.mode, endpoint: endpointLabel(e.endpoint) };
    rpcEndpointHealthy.set(l, e.state === 'healthy' ? 1 : 0);
    if (e.lag !== null) rpcEndpointLag.set(l, Number(e.lag));
  },
};
