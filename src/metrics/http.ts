import type { FastifyInstance } from 'fastify';
import { LATENCY_BUCKETS, metrics } from './registry.js';

// HTTP requests of the public server by route pattern (never the raw URL: ids in paths would make a series per
// session) and status class. A request no route matched is counted under route "unmatched".

const requests = metrics.counter<'method' | 'route' | 'status'>({
  name: 'stablepay_http_requests_total',
  help: 'HTTP requests answered by the public server, by method, route pattern and status code.',
  labels: ['method', 'route', 'status'],
  values: { method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] },
  maxSeries: 1500,
});

const duration = metrics.histogram<'method' | 'route'>({
  name: 'stablepay_http_request_duration_seconds',
  help: 'Time from receiving a request to the end of its response, by method and route pattern.',
  labels: ['method', 'route'],
  values: { method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] },
  buckets: LATENCY_BUCKETS,
  maxSeries: 300,
});

type Series = { count: { inc(): void }; time: { observe(seconds: number): void } };
// Resolved series by method, route and status: the hook does one Map lookup per request (bounded by the caps above).
const series = new Map<string, Series>();
const seriesOf = (method: string, route: string, status: number): Series => {
  const key = `${method} ${status} ${route}`;
  let s = series.get(key);
  if (!s) {
    s = { count: requests.child({ method, route, status: String(status) }), time: duration.child({ method, route }) };
    if (series.size < 5000) series.set(key, s);
  }
  return s;
};

/** Installs the root hook; call before any route is registered so that every route is measured. */
export function instrumentHttp(app: FastifyInstance): void {
  app.addHook('onResponse', (req, reply, done) => {
    const s = seriesOf(req.method, req.routeOptions.url ?? 'unmatched', reply.statusCode);
    s.count.inc();
    s.time.observe(reply.elapsedTime / 1000);
    done();
  });
}
