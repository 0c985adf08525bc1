import { describe, expect, it } from 'vitest';
import { metrics } from '../../src/metrics/registry.js';
import { rpcMetricsObserver } from '../../src/metrics/rpc.js';

// The failover layer's observer (chains/rpc/observer.ts) as the process wires it (src/main.ts): calls, failovers and
// endpoint health become the RPC metrics that RpcErrorRate and the dashboard read, labelled by host:port only.
describe('RPC metrics from the failover observer', () => {
  const secret = 'https://rpc.example.net:8545/v2/SECRETKEY123?apikey=SECRETKEY123';
  const other = 'https://backup.example.org/';
  const line = (text: string, name: string, labels: string) =>
    text.split('\n').find((l) => l.startsWith(`${name}{`) && labels.split(',').every((p) => l.includes(p)));

  it('counts calls by outcome, a request error apart from an endpoint fault, and never shows the URL path', async () => {
    const base = { network: 'ethereum', mode: 'live', method: 'eth_getLogs' };
    rpcMetricsObserver.onCall({ ...base, endpoint: secret, ok: true, ms: 12, fault: null });
    rpcMetricsObserver.onCall({ ...base, endpoint: secret, ok: false, ms: 30_000, fault: 'timeout after 10000 ms' });
    rpcMetricsObserver.onCall({ ...base, endpoint: secret, ok: false, ms: 40, fault: 'http 429' });
    rpcMetricsObserver.onCall({ ...base, endpoint: secret, ok: false, ms: 40, fault: 'http 503' });
    rpcMetricsObserver.onCall({ ...base, endpoint: secret, ok: false, ms: 5, fault: null });
    const text = await metrics.render();
    const l = 'network="ethereum",mode="live",endpoint="rpc.example.net:8545",method="eth_getLogs"';
    for (const outcome of ['ok', 'timeout', 'rate_limited', 'error', 'request_error']) {
      expect(line(text, 'stablepay_rpc_requests_total', `${l},outcome="${outcome}"`), outcome).toMatch(/ 1$/);
    }
    expect(line(text, 'stablepay_rpc_request_duration_seconds_count', l)).toMatch(/ 5$/);
    expect(text).not.toContain('SECRETKEY123');
  });

  it('counts failovers and sets endpoint health and lag', async () => {
    rpcMetricsObserver.onFailover({ network: 'bsc', mode: 'test', from: secret, to: other, reason: 'timeout' });
    rpcMetricsObserver.onHealth({ network: 'bsc', mode: 'test', endpoint: secret, state: 'lagging', head: 100n, lag: 50n });
    rpcMetricsObserver.onHealth({ network: 'bsc', mode: 'test', endpoint: other, state: 'healthy', head: 150n, lag: 0n });
    const text = await metrics.render();
    expect(line(text, 'stablepay_rpc_failovers_total', 'network="bsc",from="rpc.example.net:8545",to="backup.example.org"')).toMatch(/ 1$/);
    expect(line(text, 'stablepay_rpc_endpoint_healthy', 'network="bsc",endpoint="rpc.example.net:8545"')).toMatch(/ 0$/);
    expect(line(text, 'stablepay_rpc_endpoint_healthy', 'network="bsc",endpoint="backup.example.org"')).toMatch(/ 1$/);
    expect(line(text, 'stablepay_rpc_endpoint_lag_blocks', 'network="bsc",endpoint="rpc.example.net:8545"')).toMatch(/ 50$/);
  });
});
