import { createServer, type Server } from 'node:http';
import { metrics, type MetricsRegistry } from './registry.js';

// The metrics listener: its own port (METRICS_PORT), apart from the public API, serving GET /metrics, and GET /healthz
// for the liveness probe of processes without the API role (worker, watcher): it answers while the event loop runs and
// reads nothing, so an outage of PostgreSQL or Redis does not fail it (docs/deploy.md, "Kubernetes").

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(o: { host: string; port: number; registry?: MetricsRegistry }): Promise<MetricsServer> {
  const registry = o.registry ?? metrics;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      return;
    }
    if (req.method !== 'GET' || path !== '/metrics') {
      res
        .writeHead(path === '/metrics' ? 405 : 404, { 'content-type': 'text/plain' })
        .end(path === '/metrics' ? 'method not allowed\n' : 'not found: GET /metrics or /healthz\n');
      return;
    }
    registry.render().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${(err as Error).message}\n`),
    );
  });
  server.keepAliveTimeout = 65_000; // longer than Prometheus's scrape interval keeps its connection warm
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : o.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
