import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import '../../src/metrics-collectors/start.js';
import '../../src/metrics/http.js';
import '../../src/metrics/rpc.js';
import '../../src/metrics/webhooks.js';
import '../../src/metrics/signer.js';
import '../../src/metrics/read-replica.js';
import { metrics } from '../../src/metrics/registry.js';
import { NETWORKS } from '../../chains/registry.js';

// The shipped alert rules, Prometheus example and Grafana dashboard: promtool (Debian's prometheus package, installed
// by .ci/run) checks and unit-tests the rules, and every stablepay_ metric they read is one the service declares.
metrics.enableProcessMetrics();
const promtool = (...args: string[]) => execFileSync('promtool', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const declared = (name: string) => metrics.prom.getSingleMetric(name.replace(/_(bucket|count|sum)$/, '')) !== undefined;
const namesIn = (text: string) => [...new Set([...text.matchAll(/\bstablepay_[a-z0-9_]+/g)].map((m) => m[0]))];

describe('deploy/prometheus and deploy/grafana', () => {
  it('promtool checks the rules and the example configuration', () => {
    expect(promtool('check', 'rules', 'deploy/prometheus/alerts.yml')).toMatch(/SUCCESS: \d+ rules found/);
    expect(promtool('check', 'config', 'deploy/prometheus/prometheus.yml')).toContain('is valid prometheus config file syntax');
  });

  it("promtool's unit tests of the rules pass", () => {
    expect(promtool('test', 'rules', 'deploy/prometheus/alerts.test.yml')).toContain('SUCCESS');
  });

  it('ships the alerts operators expect, each with a runbook section', () => {
    const rules = readFileSync('deploy/prometheus/alerts.yml', 'utf8');
    const runbook = readFileSync('docs/operations.md', 'utf8').toLowerCase();
    const names = [...rules.matchAll(/- alert: (\w+)/g)].map((m) => m[1]!);
    expect(names).toEqual(
      expect.arrayContaining([
        'WatcherStalled',
        'WatcherLagging',
        'RpcErrorRate',
        'OutboxStuck',
        'PayoutsStuck',
        'HotWalletLow',
        'ReconciliationDrift',
        'HotWalletUnknownTransactions',
        'SubscriptionsOnHold',
        'SignerRefusing',
        'SignerUnavailable',
      ]),
    );
    for (const n of names) expect(runbook, n).toContain(`### ${n.toLowerCase()}`);
  });

  it('reads only metrics the service declares, in the rules and in the dashboard', () => {
    const rules = namesIn(readFileSync('deploy/prometheus/alerts.yml', 'utf8'));
    const dashboard = readFileSync('deploy/grafana/stablepay.json', 'utf8');
    JSON.parse(dashboard);
    const panels = namesIn(dashboard);
    expect(rules.length).toBeGreaterThan(8);
    expect(panels.length).toBeGreaterThan(15);
    expect([...rules, ...panels].filter((n) => !declared(n))).toEqual([]);
  });

  it("HotWalletLow reads each network's threshold from the registry: exported per network, and the same in the rule tests", async () => {
    const exported = (await metrics.prom.getSingleMetric('stablepay_hot_wallet_low_native_threshold')!.get()).values;
    expect(Object.fromEntries(exported.map((v) => [v.labels.network, v.value]))).toEqual(
      Object.fromEntries(NETWORKS.map((n) => [n.id, Number(n.lowNativeBalance)])),
    );
    const tests = readFileSync('deploy/prometheus/alerts.test.yml', 'utf8');
    const inTests = [...tests.matchAll(/stablepay_hot_wallet_low_native_threshold\{network="(\w+)"[^}]*\}'\n\s+values: "([\d.]+)x/g)];
    expect(inTests.length).toBeGreaterThan(2);
    for (const [, network, value] of inTests) expect(value, network).toBe(NETWORKS.find((n) => n.id === network)?.lowNativeBalance);
  });
});
