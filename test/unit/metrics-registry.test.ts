import { describe, expect, it } from 'vitest';
import { MetricsRegistry } from '../../src/metrics/registry.js';
import { endpointLabel } from '../../src/metrics/rpc.js';

describe('metrics registry', () => {
  it('folds label values outside a closed vocabulary and past the series cap into "other"', async () => {
    const r = new MetricsRegistry();
    const c = r.counter({ name: 'stablepay_x_total', help: 'x', labels: ['route', 'outcome'], values: { outcome: ['ok', 'error'] }, maxSeries: 2 });
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
    r.onScrape('broken', async () => { throw new Error('db down'); });
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
