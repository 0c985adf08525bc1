import { afterEach, describe, expect, it } from 'vitest';
import { MetricsRegistry } from '../../src/metrics/registry.js';
import { type MetricsServer, startMetricsServer } from '../../src/metrics/server.js';

// The metrics listener's /healthz: the liveness probe of worker and watcher pods (deploy/kubernetes/app/, docs/deploy.md).
// It must answer without running the scrape collectors, which read PostgreSQL and Redis: a database outage must not
// restart every worker.

describe('metrics listener /healthz', () => {
  let server: MetricsServer | undefined;
  let release: () => void = () => {};
  afterEach(async () => {
    release();
    await server?.close();
  });

  it('answers 200 while a scrape is stuck in a collector, and runs no collector itself', async () => {
    const registry = new MetricsRegistry();
    let calls = 0;
    const stuck = new Promise<void>((resolve) => {
      release = resolve;
    });
    registry.onScrape('stuck', async () => {
      calls += 1;
      await stuck; // stands for a database that does not answer
    });
    server = await startMetricsServer({ host: '127.0.0.1', port: 0, registry });
    const base = `http://127.0.0.1:${server.port}`;

    const scrape = fetch(`${base}/metrics`);
    await expect.poll(() => calls).toBe(1);
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.text()).toBe('ok\n');
    expect(calls).toBe(1);

    release();
    const metricsRes = await scrape;
    expect(metricsRes.status).toBe(200);
    await metricsRes.text();
  });

  it('keeps everything else refused: POST /healthz and unknown paths are 404, POST /metrics 405', async () => {
    server = await startMetricsServer({ host: '127.0.0.1', port: 0, registry: new MetricsRegistry() });
    const base = `http://127.0.0.1:${server.port}`;
    const post = await fetch(`${base}/healthz`, { method: 'POST' });
    expect(post.status).toBe(404);
    await post.text();
    const other = await fetch(`${base}/readyz`);
    expect(other.status).toBe(404);
    expect(await other.text()).toContain('GET /metrics or /healthz');
    const postMetrics = await fetch(`${base}/metrics`, { method: 'POST' });
    expect(postMetrics.status).toBe(405);
    await postMetrics.text();
  });
});
