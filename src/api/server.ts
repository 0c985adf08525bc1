import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { ReadDb } from '../db/read-db.js';
import { ApiError, invalidRequest } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { RateService } from '../rates/index.js';
import type { SecretBox } from '../security/secret-box.js';
import type { SessionRow } from '../ledger/payments/sessions.js';
import { createAuthenticator } from './auth.js';
import { sendError, toApiError } from './errors.js';
import { createClientErrorHandler } from './client-error.js';
import { createRateLimiter } from './rate-limit.js';
import { createHttpLimits, RATE_LIMITS_OFF, RateLimitedError, setRateLimitHeaders, type RateLimitSettings } from './rate-limit-http.js';
import { registerSessionRoutes } from './routes/sessions.js';
import { registerRefundRoutes, type RefundRouteDeps } from './routes/refunds.js';
import { registerExportRoutes } from './routes/exports.js';
import { NO_CHAINS, type ChainLookup } from '../domain/chain-lookup.js';
import { registerSubscriptionApi, type SubscriptionApiDeps } from './routes/subscription-api.js';
import { instrumentHttp } from '../metrics/http.js';
import { registerErrorDocs } from './error-docs.js';
import { registerOpenApiRoutes } from './openapi/routes.js';
import { sharedReadiness } from './readiness.js';
import { BusinessIdLogController } from './request-log.js';
import { DEFAULT_SHUTDOWN_GRACE_MS, trackInFlight } from './in-flight.js';

export interface ServerDeps {
  db: Db;
  /** Reporting reads (the merchant exports): the read replica (READ_DATABASE_URL); absent: `db`. */
  reads?: ReadDb;
  redis: Redis;
  box: SecretBox;
  rates: RateService;
  checkoutBaseUrl: string;
  docsUrl: string;
  redisPrefix: string;
  authWindowSeconds: number;
  maxBodyBytes: number;
  /**
   * HTTP_REQUEST_TIMEOUT_MS: the whole request (headers and body) must arrive within this, or it answers 408
   * `request_timeout` and the connection closes; a slow body cannot hold a socket for ever. Default 30 s.
   */
  requestTimeoutMs?: number;
  /** SESSION_LIFETIME_SECONDS: the session lifetime of merchants without their own. */
  sessionLifetimeSeconds: number;
  logLevel?: string;
  /** Where JSON log lines go (stdout by default); tests capture them. */
  logStream?: NodeJS.WritableStream;
  keyCacheMs?: number;
  onSessionCreated?: (s: SessionRow) => Promise<void>;
  /** The configured chains (chains/chain-registry.ts): address checks, token decimals, display forms; without it no session can be refunded. */
  chains?: ChainLookup;
  onRefundCreated?: RefundRouteDeps['onRefundCreated'];
  /** Subscription flow: injectable clock and life-cycle settings (tests move time). */
  subscriptions?: Pick<SubscriptionApiDeps, 'clock' | 'settings'>;
  /** Request rate limits (docs/rate-limits.md); absent: all off. */
  rateLimits?: RateLimitSettings;
  /** Redis of the rate limits when not `redis` (tests point it at a dead server). */
  rateLimitRedis?: Redis;
  /** Fastify's trustProxy: which X-Forwarded-For hops give the client IP; absent: the socket address. */
  trustProxy?: boolean | number | string[];
  /** Extra route registrations (checkout page, network selection, ...) added by other modules. */
  plugins?: Array<(app: FastifyInstance) => void | Promise<void>>;
  /** Count and time every request by route pattern and status (src/metrics/http.ts). */
  httpMetrics?: boolean;
  /** Told of every readiness probe that ran (tests count them). */
  onReadinessProbe?: () => void;
  /**
   * SHUTDOWN_GRACE_MS: how long `close()` waits for the requests in flight (in-flight.ts) before it cuts them off.
   * Default 10 s.
   */
  shutdownGraceMs?: number;
}

export async function buildServer(deps: ServerDeps): Promise<FastifyInstance> {
  const send = (req: FastifyRequest, reply: FastifyReply, err: unknown) => {
    const apiErr = toApiError(err);
    if (apiErr.status >= 500) req.log.error({ err }, 'request failed');
    else req.log.info({ code: apiErr.code, param: apiErr.param }, 'request refused');
    if (apiErr instanceof RateLimitedError) reply.headers(apiErr.headers);
    return sendError(req, reply, apiErr, deps.docsUrl);
  };
  const requestTimeout = deps.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const app = Fastify({
    // Node checks these deadlines on a timer: every quarter of the timeout (at most 30 s), so a request that misses
    // its deadline is answered at most 25 % late. The headers' deadline never exceeds the request's.
    requestTimeout,
    http: {
      requestTimeout,
      headersTimeout: Math.min(60_000, requestTimeout),
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(requestTimeout / 4))),
    },
    logger: {
      level: deps.logLevel ?? 'info',
      redact: ['req.headers.authorization', 'req.headers["x-service-signature"]'],
      ...(deps.logStream ? { stream: deps.logStream } : {}),
    },
    genReqId: () => newId('req'),
    logController: new BusinessIdLogController({ requestIdLogLabel: 'request_id' }),
    bodyLimit: deps.maxBodyBytes,
    return503OnClosing: false,
    trustProxy: trustProxyOption(deps.trustProxy),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 300 },
    // Malformed URLs and over-long path parameters are answered in the spec's error shape too.
    frameworkErrors: (err, req, reply) => send(req, reply, err),
    // Oversized headers and unparsable requests: the spec's shape too, and a clean close (client-error.ts).
    clientErrorHandler: createClientErrorHandler(deps.docsUrl, (err, code) => app.log.info({ code, err: err.message }, 'client error')),
  });
  // First hook of all: a request counts as in flight before any work starts (close() waits for it).
  const inFlight = trackInFlight(app);

  // Bodies stay raw bytes: the signature covers exactly what was received. JSON is parsed after authentication.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body, done) => {
    req.rawBody = body as Buffer;
    done(null, undefined);
  });

  app.addHook('onRequest', async (req, reply) => {
    reply.header('Request-Id', req.id);
  });
  if (deps.httpMetrics) instrumentHttp(app);

  // The signed API's Redis calls (the nonce, and the limits when they share its Redis) on a connection of their own with
  // auto-pipelining: the calls of requests handled in the same tick leave in one socket write. Not on `deps.redis`,
  // which BullMQ's connections are duplicated from (docs/performance.md, "API auth path").
  const authRedis = deps.redis.duplicate({ enableAutoPipelining: true, connectionName: API_AUTH_REDIS_NAME });
  authRedis.on('error', (err) => app.log.warn({ err }, 'redis connection error (API auth connection)')); // reconnects on its own
  app.addHook('onClose', async () => authRedis.disconnect());
  const limits = createHttpLimits(
    createRateLimiter({
      redis: deps.rateLimitRedis ?? authRedis,
      prefix: deps.redisPrefix,
      onFailOpen: (err) => app.log.warn({ err }, 'rate limit check failed: Redis did not answer, request let through'),
    }),
    deps.rateLimits ?? RATE_LIMITS_OFF,
  );
  app.addHook('onRequest', async (req) => limits.onRequest(req));

  app.setErrorHandler((err, req, reply) => send(req, reply, err));
  app.setNotFoundHandler((req, reply) =>
    send(
      req,
      reply,
      invalidRequest('resource_not_found', `Unrecognized request URL (${req.method} ${req.url.split('?')[0]}).`, undefined, 404),
    ),
  );

  app.get('/healthz', async () => ({ status: 'ok' }));
  registerErrorDocs(app);
  const readiness = sharedReadiness(async () => {
    const [postgres, redis] = await Promise.all([
      withTimeout(sql`select 1`.execute(deps.db), 2000).then(
        () => 'ok' as const,
        () => 'unreachable' as const,
      ),
      withTimeout(deps.redis.ping(), 2000).then(
        () => 'ok' as const,
        () => 'unreachable' as const,
      ),
    ]);
    deps.onReadinessProbe?.();
    return { status: postgres === 'ok' && redis === 'ok' ? 'ready' : 'unavailable', checks: { postgres, redis } };
  }, READINESS_REUSE_MS);
  app.get('/readyz', async (_req, reply) => {
    const r = await readiness();
    return reply.code(r.status === 'ready' ? 200 : 503).send(r);
  });
  registerOpenApiRoutes(app); // the OpenAPI document and its reference page (docs/openapi.md)

  const authenticate = createAuthenticator({
    db: deps.db,
    redis: authRedis,
    box: deps.box,
    windowSeconds: deps.authWindowSeconds,
    redisPrefix: deps.redisPrefix,
    keyCacheMs: deps.keyCacheMs,
    // One Redis call for the per-key limit and the nonce when both live on the same Redis (always, outside tests);
    // two (the limiter failing open on its own Redis, the nonce's SET) when the limits have their own.
    ...(deps.rateLimitRedis === undefined || deps.rateLimitRedis === deps.redis
      ? {
          admit: (req: FastifyRequest, keyId: string, nonce: { key: string; ttlSeconds: number }) =>
            limits.perKeyAndNonce(req, keyId, nonce),
        }
      : { limitKey: (req: FastifyRequest, keyId: string) => limits.perKey(req, keyId) }),
  });

  // The signed API, served under /api/v1 and its alias /v1 (decisions.md).
  const api = async (scope: FastifyInstance) => {
    scope.addHook('preHandler', async (req, reply) => {
      try {
        req.auth = await authenticate(req);
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) await limits.authFailed(req);
        throw err;
      }
      setRateLimitHeaders(reply, req.rateLimit);
    });
    registerSessionRoutes(scope, deps);
    const chains = deps.chains ?? NO_CHAINS;
    registerRefundRoutes(scope, { db: deps.db, chains, onRefundCreated: deps.onRefundCreated });
    registerExportRoutes(scope, { db: deps.db, reads: deps.reads, chains });
    registerSubscriptionApi(scope, {
      db: deps.db,
      checkoutBaseUrl: deps.checkoutBaseUrl,
      ...deps.subscriptions,
      displayAddress: (n, m, c) => chains.displayAddress(n, m, c),
    });
  };
  await app.register(api, { prefix: '/api/v1' });
  await app.register(api, { prefix: '/v1' });
  for (const plugin of deps.plugins ?? []) await app.register(async (scope) => plugin(scope));
  // Last: its onClose hook must run before every other one (the auth Redis, the plugins' hooks).
  inFlight.waitOnClose(deps.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS);
  return app;
}

/** CLIENT SETNAME of the signed API's own Redis connection (nonces, rate limits): visible in CLIENT LIST. */
export const API_AUTH_REDIS_NAME = 'stablepay-api-auth';

/** A /readyz answer is reused this long: at most one database and one Redis round trip per second, however many ask. */
const READINESS_REUSE_MS = 1000;

/** How long a request (headers and body) may take to arrive by default: generous for a 64 KB body on a slow link. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** A hop count N trusts the N proxies nearest to us (Fastify's types take it only as a function). */
function trustProxyOption(t: ServerDeps['trustProxy']): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof t === 'number') return (_address, hop) => hop < t;
  return t ?? false;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);
}
