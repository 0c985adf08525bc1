import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

// A merchant webhook endpoint for the benchmarks (webhooks.ts, processes.ts): answers 200 at once and calls `onHit`
// with each attempt's event id (the X-Service-Event-Id header the service sends with every attempt; its body carries
// the same id). It verifies no signature: test/support/webhook-receiver.ts does (and checks every body against the
// OpenAPI document), which would cost the benchmark's process CPU the measured processes need on a 2-core machine; the
// delivery worker's signing is the same whatever the receiver does.

export interface CountingReceiver {
  url: string;
  close(): Promise<void>;
}

export async function startCountingReceiver(onHit: (eventId: string) => void): Promise<CountingReceiver> {
  const server = createServer((req, res) => {
    const id = req.headers['x-service-event-id'];
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"received":true}');
      if (typeof id === 'string') onHit(id);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
