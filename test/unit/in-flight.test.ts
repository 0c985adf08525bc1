import { request as httpRequest, Agent } from 'node:http';
import { Writable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { trackInFlight } from '../../src/api/in-flight.js';

// src/api/in-flight.ts on a bare Fastify listener: close() waits for requests whose clients hung up (Node's
// server.close() waits only for connections), ends kept-alive connections with their last request instead of after
// keepAliveTimeout, and gives up at the grace period with one warning.

interface Gate {
  promise: Promise<void>;
  open(): void;
}
const gate = (): Gate => {
  let open = () => {};
  const promise = new Promise<void>((r) => {
    open = r;
  });
  return { promise, open };
};

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function listening(o: { graceMs: number; logs?: string[] }, routes: (app: FastifyInstance) => void): Promise<number> {
  const logs = o.logs ?? [];
  app = Fastify({
    return503OnClosing: false,
    logger: {
      level: 'info',
      stream: new Writable({
        write(c: Buffer, _e, done) {
          logs.push(c.toString('utf8'));
          done();
        },
      }),
    },
  });
  const inFlight = trackInFlight(app);
  routes(app);
  inFlight.waitOnClose(o.graceMs);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const a = app.server.address();
  return typeof a === 'object' && a ? a.port : 0;
}

/** A GET whose client hangs up once the handler has started. */
function hangUpOn(port: number, path: string, started: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false });
    req.on('error', () => resolve());
    req.end();
    void started.then(() => {
      req.destroy();
      resolve();
    });
  });
}

const settled = async (p: Promise<unknown>, ms: number) =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

describe('close() with requests in flight', () => {
  it('waits for a handler whose client hung up, and its onClose hooks run after it', async () => {
    const started = gate();
    const release = gate();
    const order: string[] = [];
    const port = await listening({ graceMs: 10_000 }, (a) => {
      a.addHook('onClose', async () => void order.push('other onClose hook'));
      a.get('/slow', async () => {
        started.open();
        await release.promise;
        order.push('handler done');
        return { ok: true };
      });
    });
    await hangUpOn(port, '/slow', started.promise);
    const closing = app!.close();
    expect(await settled(closing, 300)).toBe(false); // Fastify alone returns here: no connection is left
    release.open();
    expect(await settled(closing, 5_000)).toBe(true);
    expect(order).toEqual(['handler done', 'other onClose hook']);
    app = undefined;
  });

  it('waits for a request refused by a hook after its client left (no handler runs)', async () => {
    const started = gate();
    const release = gate();
    const port = await listening({ graceMs: 10_000 }, (a) => {
      a.addHook('preHandler', async () => {
        started.open();
        await release.promise;
        throw Object.assign(new Error('no'), { statusCode: 401 });
      });
      a.get('/guarded', async () => ({ ok: true }));
    });
    await hangUpOn(port, '/guarded', started.promise);
    const closing = app!.close();
    expect(await settled(closing, 300)).toBe(false);
    release.open();
    expect(await settled(closing, 5_000)).toBe(true);
    app = undefined;
  });

  it('answers a kept-alive request in flight with Connection: close and returns as soon as it is done', async () => {
    const started = gate();
    const release = gate();
    const port = await listening({ graceMs: 10_000 }, (a) => {
      a.get('/slow', async () => {
        started.open();
        await release.promise;
        return { ok: true };
      });
    });
    const agent = new Agent({ keepAlive: true });
    const answer = new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/slow', agent }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
      });
      req.on('error', reject);
      req.end();
    });
    await started.promise;
    const t0 = Date.now();
    const closing = app!.close();
    while (app!.server.listening) await new Promise((r) => setTimeout(r, 5)); // the close is under way
    release.open();
    expect(await answer).toEqual({ status: 200, connection: 'close', body: '{"ok":true}' });
    await closing;
    expect(Date.now() - t0).toBeLessThan(2_000); // not Fastify's 72 s keepAliveTimeout
    agent.destroy();
    app = undefined;
  });

  it('gives up after the grace period with one warning, and closes the connections still open', async () => {
    const started = gate();
    const logs: string[] = [];
    const port = await listening({ graceMs: 300, logs }, (a) => {
      a.get('/never', async () => {
        started.open();
        await new Promise(() => {});
      });
    });
    const outcome = new Promise<string>((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/never', agent: false }, () => resolve('answered'));
      req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      req.end();
    });
    await started.promise;
    const t0 = Date.now();
    await app!.close();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(await outcome).toBe('ECONNRESET'); // the connection ends: never half an answer
    const cut = logs.filter((l) => l.includes('grace period over'));
    expect(cut).toHaveLength(1);
    expect(JSON.parse(cut[0]!)).toMatchObject({ level: 40, in_flight: 1, grace_ms: 300 });
    app = undefined;
  });
});
