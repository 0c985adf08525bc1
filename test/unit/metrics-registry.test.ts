import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { MetricsRegistry } from '../../src/metrics/registry.js';
import { endpointLabel } from '../../src/metrics/rpc.js';
import { startProcessMetrics, type ProcessMetricsOptions } from '../../src/metrics-collectors/start.js';

describe('metrics registry', () => {
  it('folds label values outside a closed vocabulary and past the series cap into "other"', async () => {
    const r = new MetricsRegistry();
    const c = r.counter({
      name: 'stablepay_x_total',
      help: 'x',
      labels: ['route', 'outcome'],
      values: { outcome: ['ok', 'error'] },
      maxSeries: 2,
    });
    c.inc({ route: '/a', outcome: 'ok' });
    c.inc({ route: '/b', outcome: 'weird' });
    c.inc({ route: '/c', outcome: 'ok' });
    const text = await r.render();
    expect(text).toContain('stablepay_x_total{route="/a",outcome="ok"} 1');
    expect(text).toContain('stablepay_x_total{route="/b",outcome="other"} 1');
    expect(text).toContain('stablepay_x_total{route="other",outcome="other"} 1');
    expect(text).not.toContain('route="/c"');
  });

  it('returns the same handle for the same declaration and refuses a conflicting one', () => {
    const r = new MetricsRegistry();
    const a = r.gauge({ name: 'stablepay_g', help: 'g', labels: ['network'] });
    expect(r.gauge({ name: 'stablepay_g', help: 'g', labels: ['network'] })).toBe(a);
    expect(() => r.counter({ name: 'stablepay_g', help: 'g', labels: ['network'] })).toThrow(/declared twice/);
    expect(() => r.gauge({ name: 'bad-name', help: 'g', labels: [] })).toThrow(/snake_case/);
  });

  it('runs scrape collectors before rendering and counts a failing or slow one without failing the scrape', async () => {
    const r = new MetricsRegistry();
    const g = r.gauge({ name: 'stablepay_backlog', help: 'b', labels: [] });
    let n = 0;
    r.onScrape('ok', async () => g.set({}, ++n));
    r.onScrape('broken', async () => {
      throw new Error('db down');
    });
    r.onScrape('slow', () => new Promise(() => {}));
    const text = await r.render(50);
    expect(text).toContain('stablepay_backlog 1');
    expect(text).toContain('stablepay_metrics_collector_errors_total{collector="broken"} 1');
    expect(text).toContain('stablepay_metrics_collector_errors_total{collector="slow"} 1');
  });

  it('labels an RPC endpoint by host and port only, never its path or credentials', () => {
    expect(endpointLabel('https://mainnet.infura.io/v3/SECRETKEY')).toBe('mainnet.infura.io');
    expect(endpointLabel('https://user:pw@rpc.example:8545/?key=SECRET')).toBe('rpc.example:8545');
  });
});

describe('metrics listener settings', () => {
  const base = { MASTER_KEY: '5a'.repeat(32) };
  it('METRICS_PORT: 9464 by default on 127.0.0.1, 0 or off disable it, anything else is refused by name', () => {
    expect(loadConfig(base)).toMatchObject({ METRICS_PORT: 9464, METRICS_HOST: '127.0.0.1' });
    expect(loadConfig({ ...base, METRICS_PORT: 'off' }).METRICS_PORT).toBeNull();
    expect(loadConfig({ ...base, METRICS_PORT: '0' }).METRICS_PORT).toBeNull();
    expect(loadConfig({ ...base, METRICS_PORT: '9100' }).METRICS_PORT).toBe(9100);
    for (const bad of ['70000', 'yes', '-1']) expect(() => loadConfig({ ...base, METRICS_PORT: bad })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, METRICS_PORT: 'yes' })).toThrow(/METRICS_PORT/);
  });

  it('a metrics port already taken is logged and the process runs on without metrics', async () => {
    const squatter = createServer();
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', () => r()));
    const port = (squatter.address() as AddressInfo).port;
    const errors: string[] = [];
    const o = {
      host: '127.0.0.1',
      port,
      roles: ['api'],
      adapters: new Map(),
      keys: null,
      redisPrefix: 'x',
      headIntervalMs: 1000,
      balanceIntervalMs: 5000,
      log: { warn() {}, error: (_: Record<string, unknown>, msg: string) => void errors.push(msg) },
    } as unknown as ProcessMetricsOptions; // the api role touches neither the database nor Redis
    const pm = await startProcessMetrics(o);
    expect(pm.port).toBeUndefined();
    expect(errors).toEqual(['metrics listener could not start (METRICS_PORT); this process exports no metrics']);
    await pm.stop();
    squatter.close();
  });
});
