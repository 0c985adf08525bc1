import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

// A graceful close for a Fastify listener: `app.close()` returns only once every request that started has finished,
// or once the grace period (SHUTDOWN_GRACE_MS) is over, so that src/main.ts `stop()` destroys the database pool and
// Redis after the last request, never under one.
//
// Why Fastify's own close is not enough: Node's `server.close()` waits for connections, not for requests. A client
// that hangs up mid-request (a load generator stopping, a proxy's timeout) takes its connection with it while the
// handler goes on with its reads and its transaction; the close then completes, the onClose hooks disconnect Redis and
// `stop()` destroys the pool under the handler ("driver has already been destroyed"). And a kept-alive connection
// whose request ends after the close began would idle until keepAliveTimeout (72 s) before the close could return.
//
// Invariants:
// - A request counts from its first onRequest hook until both (a) its handling is over: its route handler settled
//   or, when no handler ran (a hook refused it, no route matched), its reply was sent; and (b) its response is
//   closed: sent in full, or its client gone.
// - Once closing, every response says `Connection: close` and every connection left idle is closed, so the listener
//   ends as soon as the last request does. A request arriving on a kept-alive connection meanwhile is served and counted
//   (a proxy's late request gets its answer rather than a 503).
// - The waiting onClose hook runs right after Fastify's own server close and before every other onClose hook: Fastify
//   runs them in reverse order of registration and registers its own last (at ready). So `waitOnClose` is called
//   after every plugin's registration.
// - At the end of the grace period the connections still open are closed (their clients see the connection end,
//   never half an answer; a create cut off that way committed whole or not at all), one warning says how many requests
//   were cut off, and the close goes on.

/** SHUTDOWN_GRACE_MS's default: fits with the API pod's 5 s preStop in Kubernetes' default 30 s grace period. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

export interface InFlightRequests {
  /** Requests counted now (see the invariants above). */
  count(): number;
  /** Adds the onClose hook that waits for them; call it after every plugin is registered. */
  waitOnClose(graceMs: number): void;
}

interface Entry {
  handlerRunning: boolean;
  handled: boolean;
  responseClosed: boolean;
  released: boolean;
}

/** Starts counting: call it before any other hook is added, so that the count starts before any work does. */
export function trackInFlight(app: FastifyInstance): InFlightRequests {
  const entries = new WeakMap<FastifyRequest, Entry>();
  let inFlight = 0;
  let closing = false;
  let cutOff: NodeJS.Timeout | undefined;
  let graceOver = false;
  let waiters: Array<() => void> = [];
  const wake = () => {
    for (const w of waiters) w();
    waiters = [];
  };

  const release = (e: Entry) => {
    if (e.released || !e.handled || !e.responseClosed) return;
    e.released = true;
    inFlight -= 1;
    if (!closing) return;
    app.server.closeIdleConnections();
    if (inFlight === 0) wake();
  };

  app.addHook('onRequest', (req, reply, done) => {
    const e: Entry = { handlerRunning: false, handled: false, responseClosed: false, released: false };
    entries.set(req, e);
    inFlight += 1;
    reply.raw.once('close', () => {
      e.responseClosed = true;
      release(e);
    });
    done();
  });

  // The handler's whole run, awaited or not by the client: a handler whose client left goes on until it settles.
  app.addHook('onRoute', (route) => {
    const handler = route.handler;
    route.handler = function (this: FastifyInstance, req: FastifyRequest, reply: FastifyReply) {
      const e = entries.get(req);
      if (!e) return handler.call(this, req, reply);
      e.handlerRunning = true;
      const end = () => {
        e.handlerRunning = false;
        e.handled = true;
        release(e);
      };
      let result: unknown;
      try {
        result = handler.call(this, req, reply);
      } catch (err) {
        end();
        throw err;
      }
      if (isThenable(result)) {
        return result.then(
          (v) => {
            end();
            return v;
          },
          (err: unknown) => {
            end();
            throw err;
          },
        );
      }
      end();
      return result;
    } as typeof handler;
  });

  app.addHook('onSend', (req, reply, payload, done) => {
    const e = entries.get(req);
    // Sent without a handler (refused by a hook, not found, an error before the route): its handling is over.
    if (e && !e.handlerRunning && !e.handled) {
      e.handled = true;
      release(e);
    }
    if (closing && req.raw.httpVersionMajor === 1) reply.header('Connection', 'close');
    done(null, payload);
  });

  return {
    count: () => inFlight,
    waitOnClose(graceMs) {
      app.addHook('preClose', (done) => {
        closing = true;
        if (inFlight > 0) app.log.info({ in_flight: inFlight, grace_ms: graceMs }, 'closing: waiting for the requests in flight');
        cutOff = setTimeout(() => {
          if (inFlight > 0) {
            app.log.warn({ in_flight: inFlight, grace_ms: graceMs }, 'closing: grace period over, requests still in flight cut off');
          }
          graceOver = true;
          app.server.closeAllConnections();
          wake();
        }, graceMs);
        cutOff.unref();
        done();
      });
      app.addHook('onClose', async () => {
        if (inFlight > 0 && !graceOver) await new Promise<void>((resolve) => waiters.push(resolve));
        clearTimeout(cutOff);
      });
    },
  };
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}
